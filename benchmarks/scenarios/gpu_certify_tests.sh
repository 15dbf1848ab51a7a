#!/usr/bin/env bash
# Issue 33's certify GPU tests on a 4-GPU machine (tests/engines/nccl/test_gpu_certify.py: clean twice, a
# real matmul load on one GPU, one node's environment misconfigured), each certify's wall time printed.
#   benchmarks/gpu.sh certify_tests      # nvidia-h100-x4; ~7 min
set -u
LOG="${OUT:-/tmp/gpufabric-out}/certify-tests.log"
source "$(dirname "$0")/gpu_lib.sh"
: > "$LOG"
gpu_python_setup
say "host $(hostname) $(date -u +%FT%TZ): $(timeout 30 nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1) x$(nvidia-smi -L | wc -l)"
t0=$(now)
timeout 560 python3 -m pytest -m gpu tests/engines/nccl/test_gpu_certify.py -s -q -p no:cacheprovider ${CERTIFY_TESTS_K:+-k "$CERTIFY_TESTS_K"} >"$OUT/pytest-certify.txt" 2>&1
record "pytest test_gpu_certify: exit $? wall $(since "$t0") s | $(tail -1 "$OUT/pytest-certify.txt" | cut -c1-160)"
grep -E "^certify |^  node000|^node000" "$OUT/pytest-certify.txt" | cut -c1-260 | head -40 >>"$OUT/summary.txt"
print_summary
grep -E "^certify |^  node000|^node000" "$OUT/pytest-certify.txt" | cut -c1-260 | head -40
