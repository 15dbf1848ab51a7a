#!/usr/bin/env bash
# Every gpu-marked test file, with nccl-tests built there and on PATH; multi-GPU tests skip on one GPU.
# (The rest of the suite needs dev extras the lent image lacks.) The NCCL logs of the virtual-node modes
# come back in $OUT/vnode-logs-suite.tgz.
#   benchmarks/gpu.sh suite         # ~8 min on one H100; needs .whl/ and .gpurun/nccl-tests carried
#   benchmarks/gpu.sh suite:multi   # only the multi_gpu tests, on a machine of 2 or more GPUs (~5 min)
# (Was gpu_suite.sh.)
MARK="gpu"
[ "${1:-}" = multi ] && MARK="gpu and multi_gpu"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a "$LOG"
if [ "$MARK" = gpu ]; then
  say "build nccl-tests"
  build_nccl_tests
fi
export GPUFABRIC_GPU_LOGS="$OUT/vnode-logs"
say "pytest -m \"$MARK\""
# shellcheck disable=SC2046  # the file list is split on purpose
PATH="$PWD/$NT/build:$PATH" timeout "${PYTEST_TIMEOUT:-480}" python3 -m pytest -m "$MARK" -v -p no:cacheprovider -o addopts="-ra" \
  --durations=15 $(grep -rl "mark.gpu" tests --include="test_*.py") >"$OUT/pytest-gpu-suite.log" 2>&1
record "pytest -m $MARK: exit $? | $(tail -1 "$OUT/pytest-gpu-suite.log")"
grep -E "FAILED|ERROR|^E " "$OUT/pytest-gpu-suite.log" | cut -c1-300 | head -30 | tee -a "$LOG"
grep -cE "PASSED" "$OUT/pytest-gpu-suite.log" | sed 's/^/passed lines: /'
grep -E "SKIPPED" "$OUT/pytest-gpu-suite.log" | cut -c1-200 | sort | uniq -c | head -20
tar -czf "$OUT/vnode-logs-suite.tgz" -C "$OUT" vnode-logs 2>/dev/null; rm -rf "$OUT/vnode-logs"
