# Quick start: `make demo` (bench on this host's default) and `make test` (lint, types, CPU suite).
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# The CPU machines of this project keep a CPU wheel of torch on disk; use it when it is there. Elsewhere
# ask PyTorch's CPU index first (PyPI's default torch is a CUDA build of several GB), then PyPI.
WHEELS := $(wildcard /opt/wheels)
PIP_FIND := $(if $(WHEELS),--find-links $(WHEELS),)
TORCH_CPU_INDEX ?= https://download.pytorch.org/whl/cpu
TORCH_CPU := $(if $(WHEELS),"torch==2.13.0",--timeout 15 --retries 0 --index-url $(TORCH_CPU_INDEX) torch)
OS_PACKAGES := openmpi-bin slurm-wlm munge libpmix-dev chromium iproute2 util-linux gcc libc6-dev
# ip and tc build the network-namespace test beds (tests marked netns), taskset starves one of their nodes.
OS_TOOLS := mpirun slurmctld slurmd munged chromium ip tc taskset cc
# Slurm's mpi/pmix plugin dlopens the unversioned libpmix.so, which only libpmix-dev ships.
OS_FILES := /usr/lib/*/pmix2/lib/libpmix.so

.PHONY: demo test lint types unit netns-test os-deps venv gpu-test wheel clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/pip install -q $(PIP_FIND) $(TORCH_CPU) || $(BIN)/pip install -q $(PIP_FIND) torch
	$(BIN)/pip install -q $(PIP_FIND) -e ".[dev,torch]"
	touch $(STAMP)

venv: $(STAMP)

# OS packages the real-engine tests use (OpenMPI, Slurm + munge, headless Chromium, iproute2). The kernel's
# qdiscs and classifiers (sch_tbf, sch_htb, sch_netem, cls_bpf) cannot be installed from here: a test needing a missing one skips
# with one line naming it (tests/testbed/conftest.py).
os-deps:
	@missing=""; for t in $(OS_TOOLS); do command -v $$t >/dev/null 2>&1 || missing="$$missing $$t"; done; \
	for f in $(OS_FILES); do ls $$f >/dev/null 2>&1 || missing="$$missing $$f"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing OS packages (missing:$$missing)"; \
	  if [ "$$(id -u)" = "0" ]; then SUDO=""; else SUDO="sudo"; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $(OS_PACKAGES) >/dev/null; \
	fi

demo: $(STAMP)
	$(BIN)/gpufabric bench

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks tools
	$(BIN)/ruff format --check src tests benchmarks tools

types: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP) os-deps
	$(BIN)/pytest -m "not gpu" -q --durations=25

test: lint types unit

# The network-namespace test beds alone (root; part of `unit` too, skipped in one line where not allowed).
# Two at once: the beds wait on shaped links more than they compute (half a core over a serial run), and
# each bed has names of its own (docs/testbed.md).
netns-test: $(STAMP) os-deps
	$(BIN)/pytest -m netns -q -n 2

# On a GPU host: the gpu-marked suite.
gpu-test: $(STAMP)
	$(BIN)/pytest -m gpu -q

# A wheel of this checkout in dist/ (what `pip install dist/gpufabric-*.whl` takes until it is on PyPI).
wheel: $(BIN)/python
	$(BIN)/pip wheel -q --no-deps -w dist .

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
