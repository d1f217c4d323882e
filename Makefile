# Every target creates .venv and installs what it needs, so a fresh clone needs only python3.11.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-dev

.PHONY: demo test lint soak chaos properties bench bench-peers clean proto

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev,spark]'
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m raftmeta demo

# Three worker processes on two cores: most tests wait on timers and real processes rather than
# compute, so with two workers the cores were idle about 30 % of the run (tests/conftest.py
# keeps the Spark tests on one worker and hands the longest tests out first).
test: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m mypy
	$(VENV)/bin/lint-imports
	$(PY) -m pytest -q -n 3

lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m mypy
	$(VENV)/bin/lint-imports

# Long randomized simulator runs over a seed range: make soak SEEDS=100000 START=0
SEEDS ?= 100000
START ?= 0
soak: $(STAMP)
	$(PY) -m raftmeta.sim.soak --start $(START) --count $(SEEDS)

# A fault campaign on real processes (kill -9, pauses, restarts, damaged segments, loss of the
# majority) under writes, checked against every node's files: make chaos DURATION=1800 SEED=3
DURATION ?= 600
SEED ?= 0
chaos: $(STAMP)
	rm -rf .chaos/seed-$(SEED)
	$(PY) -m raftmeta chaos --dir .chaos/seed-$(SEED) --duration $(DURATION) --seed $(SEED)

# Property tests with fresh random examples each round (the suite draws fixed ones):
# make properties ROUNDS=50
ROUNDS ?= 20
PROPERTY_TESTS := $(shell grep -rl --include='test_*.py' '@given' tests)
properties: $(STAMP)
	for round in $$(seq 1 $(ROUNDS)); do \
		echo "round $$round of $(ROUNDS)"; \
		RAFTMETA_HYPOTHESIS_PROFILE=explore $(PY) -m pytest -q -p no:cacheprovider \
			--deselect tests/sim/test_simulator.py::test_ci_fault_schedules_hold_every_invariant \
			$(PROPERTY_TESTS) || exit 1; \
	done

# Benchmarks are not part of the test suite; each prints its figures and the machine.
bench: $(STAMP)
	$(PY) benchmarks/core_bench.py
	$(PY) benchmarks/placement_bench.py
	$(PY) benchmarks/metadata_bench.py

# raftmeta beside etcd and ZooKeeper in one run. Installs Debian's etcd-server and zookeeper
# packages when they are missing (needs root; without them those peers are skipped, with a line
# saying so) and the benchmark clients, then runs benchmarks/peers_bench.py.
bench-peers: $(STAMP)
	@if ! command -v etcd >/dev/null || [ ! -f /usr/share/java/zookeeper.jar ]; then \
		apt-get install -y -q etcd-server zookeeper >/dev/null \
			|| echo "could not install etcd-server and zookeeper: those peers will be skipped"; \
	fi
	$(PY) -m pip install --quiet -e '.[dev,spark,bench]'
	$(PY) benchmarks/peers_bench.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
