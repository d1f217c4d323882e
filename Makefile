# Every target creates .venv and installs what it needs, so a fresh clone needs only python3.11.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-dev

.PHONY: demo test lint soak bench clean proto

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev,spark]'
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m raftmeta demo

test: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m mypy
	$(PY) -m pytest -q

lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m mypy

# Long randomized simulator runs over a seed range: make soak SEEDS=100000 START=0
SEEDS ?= 100000
START ?= 0
soak: $(STAMP)
	$(PY) -m raftmeta.sim.soak --start $(START) --count $(SEEDS)

# Benchmarks are not part of the test suite; each prints its figures and the machine.
bench: $(STAMP)
	$(PY) benchmarks/core_bench.py
	$(PY) benchmarks/placement_bench.py
	$(PY) benchmarks/metadata_bench.py

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
