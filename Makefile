VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: demo test bench clean

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/attnphase demo --out results

test: $(STAMP)
	$(VENV)/bin/python -m pytest

bench: $(STAMP)
	$(PY) benchmarks/bench_theory.py

clean:
	rm -rf $(VENV) results .pytest_cache
