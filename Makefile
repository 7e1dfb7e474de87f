VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
CHECK  ?= /tmp/attnphase-install-check

# what ruff checks and formats
PYFILES := src tests benchmarks studies .ci docs/conf.py docs/examples

.PHONY: demo test lint docs install-check bench clean

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

# the wheel and sdist (`python -m build`, their contents checked), then the wheel installed
# (not editable) into a fresh virtualenv, used from another directory with the cache locations
# of a read-only install (HOME unwritable): the package imports and solves, the theory page is
# installed beside it
install-check: $(STAMP)
	rm -rf $(CHECK)
	$(PY) -m build --outdir $(CHECK)/dist . > $(CHECK).log
	rm -rf build
	$(PY) .ci/dist_contents.py $(CHECK)/dist
	python3 -m venv $(CHECK)/venv
	$(CHECK)/venv/bin/pip install --quiet torch==2.13.0
	$(CHECK)/venv/bin/pip install --quiet $(CHECK)/dist/*.whl
	test -f $(CHECK)/venv/share/doc/attnphase/theory.md
	mkdir -p $(CHECK)/run && touch $(CHECK)/home
	cd $(CHECK)/run && HOME=$(CHECK)/home $(CHECK)/venv/bin/attnphase theory --alpha 1.5 \
		--branch semantic --order 24,8 --format json > result.json
	$(CHECK)/venv/bin/python -c "import json; r = json.loads(open('$(CHECK)/run/result.json').readline()); \
		assert r['converged'] and r['kind'] == 'semantic', r; print('install-check: ok')"

bench: $(STAMP)
	$(PY) benchmarks/bench_theory.py

clean:
	rm -rf $(VENV) results .pytest_cache docs/_build docs/auto_examples docs/reference/generated
