#!/usr/bin/env bash
# The nccl-tests engine on virtual nodes through our mpirun driver, on a lent one-GPU machine:
# builds nccl-tests (NCCL from torch's wheel, MPI=1), then runs the gpu-marked tests of
# tests/engines/nccl_tests/test_nccl_tests_engine.py (2 and 4 processes on 2 virtual nodes, MPS on, every *_perf
# binary, two sweeps with bfloat16/max/root 1/--check and float/sum/--graph, -J on and off).
# Needs .whl/ (pydantic, typer, rich ... wheels for Python 3.12) and .gpurun/nccl-tests (NVIDIA/nccl-tests
# source), both carried. pytest's temporary directories go under $OUT, so the real run directories
# (result.json, nccl-tests' -J output, rank 0's log, NCCL's logs) come back with it.
set -u
LOG="${OUT:-/tmp/gpufabric-out}/pip.log"
source "$(dirname "$0")/gpu_lib.sh"
: > "$LOG"
gpu_python_setup
build_nccl_tests
echo "build: exit $? ($(ls $NT/build/*_perf 2>/dev/null | wc -l) binaries)"
export GPUFABRIC_NCCL_TESTS_DIR="$PWD/$NT/build" PATH="$PWD/$NT/build:$PATH"
timeout "${PYTEST_TIMEOUT:-420}" python3 -m pytest -m gpu -v -p no:cacheprovider -o addopts="-ra" \
  --basetemp="$OUT/pt" --durations=0 tests/engines/nccl_tests/test_nccl_tests_engine.py -k "${K:-virtual or without_json}" \
  >"$OUT/pytest-gpu.log" 2>&1
echo "pytest: exit $?"
tail -40 "$OUT/pytest-gpu.log"
# Few files come back from the device: the run directories travel as one archive.
tar -czf "$OUT/pt.tgz" -C "$OUT" pt 2>/dev/null && rm -rf "$OUT/pt"
