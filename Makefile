VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

# the folders that mypy checks (pyproject's [tool.mypy]: the modules they import are followed
# silently, not checked)
TYPED  := src/attnphase/params.py src/attnphase/theory src/attnphase/transitions

.PHONY: demo test lint bench clean

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/attnphase demo --out results

test: $(STAMP)
	$(VENV)/bin/python -m pytest

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests
	$(VENV)/bin/ruff format --check src tests
	$(PY) -m mypy $(TYPED)

bench: $(STAMP)
	$(PY) benchmarks/bench_theory.py

clean:
	rm -rf $(VENV) results .pytest_cache
