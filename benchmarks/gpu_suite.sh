#!/usr/bin/env bash
# Every `pytest -m gpu` test file (the rest need dev extras the lent image lacks) on a lent GPU machine,
# with nccl-tests built there (for the nccl-tests engine's tests) and on PATH. Multi-GPU tests skip on
# one GPU. The NCCL logs of the virtual-node modes
# come back in $OUT/vnode-logs-suite.tgz.
#   benchmarks/gpu_suite.sh         # ~8 min on one H100; needs .whl/ and .gpurun/nccl-tests carried
#   benchmarks/gpu_suite.sh multi   # only the multi_gpu tests, on a machine of 2 or more GPUs (~5 min)
set -u
MARK="gpu"
[ "${1:-}" = multi ] && MARK="gpu and multi_gpu"
LOG="${OUT:-/tmp/gpufabric-out}/suite.log"
source "$(dirname "$0")/gpu_lib.sh"
: > "$LOG"
gpu_python_setup
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a "$LOG"
if [ "$MARK" = gpu ]; then
  say "build nccl-tests"
  build_nccl_tests
  record "nccl-tests build: exit $? ($(ls $NT/build/*_perf 2>/dev/null | wc -l) binaries)"
fi
export GPUFABRIC_GPU_LOGS="$OUT/vnode-logs"
say "pytest -m \"$MARK\""
PATH="$PWD/$NT/build:$PATH" timeout "${PYTEST_TIMEOUT:-480}" python3 -m pytest -m "$MARK" -v -p no:cacheprovider -o addopts="-ra" \
  --durations=15 $(grep -rl "mark.gpu" tests --include="test_*.py") >"$OUT/pytest-gpu-suite.log" 2>&1
record "pytest -m $MARK: exit $? | $(tail -1 "$OUT/pytest-gpu-suite.log")"
grep -E "FAILED|ERROR|^E " "$OUT/pytest-gpu-suite.log" | cut -c1-300 | head -30 | tee -a "$LOG"
grep -cE "PASSED" "$OUT/pytest-gpu-suite.log" | sed 's/^/passed lines: /'
grep -E "SKIPPED" "$OUT/pytest-gpu-suite.log" | cut -c1-200 | sort | uniq -c | head -20
tar -czf "$OUT/vnode-logs-suite.tgz" -C "$OUT" vnode-logs 2>/dev/null; rm -rf "$OUT/vnode-logs"
print_summary
