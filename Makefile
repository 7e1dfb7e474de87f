VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

# what ruff checks and formats
PYFILES := src tests benchmarks studies .ci docs/conf.py docs/examples

.PHONY: demo test lint docs bench clean

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e '.[dev,docs]'
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/attnphase demo --out results

test: $(STAMP)
	$(VENV)/bin/python -m pytest

# ruff on every Python file of the repository; mypy on the files of pyproject's [tool.mypy];
# the layers of the package (import-linter, pyproject's [tool.importlinter]); no import of an
# underscore name from another module
lint: $(STAMP)
	$(VENV)/bin/ruff check $(PYFILES)
	$(VENV)/bin/ruff format --check $(PYFILES)
	$(PY) -m mypy
	$(VENV)/bin/lint-imports
	$(PY) .ci/private_imports.py src/attnphase

docs: $(STAMP)
	$(VENV)/bin/sphinx-build -W --keep-going -q -b html docs docs/_build/html

bench: $(STAMP)
	$(PY) benchmarks/bench_theory.py

clean:
	rm -rf $(VENV) results .pytest_cache docs/_build docs/auto_examples docs/reference/generated
