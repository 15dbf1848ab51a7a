#!/usr/bin/env bash
# The nccl-tests engine on virtual nodes through our mpirun driver, on one GPU (its gpu-marked tests).
# tests/engines/nccl_tests/test_nccl_tests_engine.py: 2 and 4 processes on 2 virtual nodes, MPS on, every
# *_perf binary, two sweeps with bfloat16/max/root 1/--check and float/sum/--graph, -J on and off.
#   benchmarks/gpu.sh vnodes-mpirun   # ~6 min on one H100; needs .whl/ and .gpurun/nccl-tests carried
#   K='virtual' benchmarks/gpu.sh vnodes-mpirun   # a pytest -k selection (default: virtual or without_json)
# pytest's temporary directories go under $OUT, so the real run directories (result.json, nccl-tests' -J
# output, rank 0's log, NCCL's logs) come back with it, as pt.tgz. (Was gpu_vnodes_mpirun.sh.)
build_nccl_tests
export GPUFABRIC_NCCL_TESTS_DIR="$PWD/$NT/build" PATH="$PWD/$NT/build:$PATH"
timeout "${PYTEST_TIMEOUT:-420}" python3 -m pytest -m gpu -v -p no:cacheprovider -o addopts="-ra" \
  --basetemp="$OUT/pt" --durations=0 tests/engines/nccl_tests/test_nccl_tests_engine.py -k "${K:-virtual or without_json}" \
  >"$OUT/pytest-gpu.log" 2>&1
record "pytest -m gpu nccl-tests engine on virtual nodes: exit $? | $(tail -1 "$OUT/pytest-gpu.log")"
tail -40 "$OUT/pytest-gpu.log"
# Few files come back from the device: the run directories travel as one archive.
tar -czf "$OUT/pt.tgz" -C "$OUT" pt 2>/dev/null && rm -rf "$OUT/pt"
