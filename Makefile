# Two commands, each safe on a fresh machine with only Python 3.11+ and access to PyPI.
#   make demo   -- create .venv if missing, install replikit, run the audit on the built-in data
#   make test   -- create .venv if missing, install replikit with test extras, run the test suite
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip
# the suite runs in this many processes (pytest-xdist; whole files per process, so module
# fixtures are built once); TEST_WORKERS=0 runs it in this process
TEST_WORKERS ?= 2

.PHONY: demo test lint bench clean

$(BIN)/python:
	$(PYTHON) -c 'import sys; sys.exit("replikit needs Python >= 3.11; found " + sys.version.split()[0]) if sys.version_info < (3, 11) else None'
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

$(VENV)/.installed-demo: $(BIN)/python pyproject.toml
	$(PIP) install --quiet -e .
	@touch $@

# lifelines is a test oracle of replikit.experiment.LifelinesModel. It pins pandas < 3, which
# would take the whole test environment back to pandas 2 (it runs on pandas 3: its checks pass),
# so it is installed without its pins; autograd and autograd-gamma are its own dependencies
# (formulaic comes with the dev extra's statsmodels tools). pip's check names the pin; it is
# deliberate.
LIFELINES := lifelines==0.30.3 autograd==1.9.1 autograd-gamma==0.5.0

$(VENV)/.installed-test: $(BIN)/python pyproject.toml
	$(PIP) install --quiet -e '.[dev,dask]'
	$(PIP) install --quiet --no-deps $(LIFELINES)
	@touch $@ $(VENV)/.installed-demo

demo: $(VENV)/.installed-demo
	$(BIN)/replikit audit --out replikit-audit --overwrite
	@echo "Open replikit-audit/report.html in a browser (JSON twin: replikit-audit/report.json)."

test: $(VENV)/.installed-test
	$(BIN)/ruff check src tests benchmarks tools
	$(BIN)/lint-imports --no-cache
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile $(PYTEST_ARGS)

lint: $(VENV)/.installed-test
	$(BIN)/ruff check src tests benchmarks tools

bench: $(VENV)/.installed-test
	$(BIN)/python benchmarks/run_all.py

clean:
	rm -rf $(VENV) replikit-audit build dist .pytest_cache .ruff_cache
