# Two commands for a fresh machine: `make demo` and `make test`. Each makes .venv on first use.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# Quiet OpenMP threads: spinning ones turn every small op into a time slice on a 2-core box.
export OMP_WAIT_POLICY ?= PASSIVE

.PHONY: demo test test-all bench install install-dev model clean

$(PY):
	$(PYTHON) -m venv $(VENV)

# torch first and pinned: a bare requirement would pull a multi-GB CUDA build.
$(VENV)/.torch: | $(PY)
	$(PY) -m pip install torch==2.13.0
	touch $@

$(VENV)/.installed: $(VENV)/.torch pyproject.toml
	$(PY) -m pip install -e .
	touch $@

$(VENV)/.installed-dev: $(VENV)/.torch pyproject.toml requirements/verl-reference.txt
	$(PY) -m pip install -e ".[dev]"
	$(PY) -m pip install --no-deps -r requirements/verl-reference.txt
	touch $@ $(VENV)/.installed

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

demo: install
	$(VENV)/bin/rlvr demo

test: install-dev
	$(PY) -m pytest -m "not slow"

test-all: install-dev
	$(PY) -m pytest

bench: install
	$(PY) benchmarks/step_throughput.py

model: install
	$(PY) scripts/make_demo_model.py --out models/tiny-arith

clean:
	rm -rf $(VENV) runs .pytest_cache
