#!/usr/bin/env bash
# Issue 16's virtual-node suite as pytest gpu tests on one GPU: --check on 2/4 vnodes, faults, A/B, tune, isolate.
# Every collective with --check on 2 and 4 virtual nodes, the hang watchdog and a killed rank
# (test_gpu_direct.py), then bench --ab, tune, SIGTERM, doctor on the real logs, and isolate with one
# slowed rank (test_gpu_vnodes_modes.py). The NCCL logs of those runs come back in $OUT/vnode-logs-PART.tgz.
#   benchmarks/gpu.sh vnodes-pytest:modes     # ~5 min on one H100; needs .whl/ carried
#   benchmarks/gpu.sh vnodes-pytest:isolate   # ~3-8 min
# (Was gpu_vnodes_pytest.sh.)
PART="${1:-modes}"
LOG="$OUT/vnodes-pytest-$PART.log"
export GPUFABRIC_GPU_LOGS="$OUT/vnode-logs"
PYTEST=(python3 -m pytest -m gpu -v -p no:cacheprovider -o addopts="-ra")
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee -a "$LOG"
if [ "$PART" = modes ]; then
  say "pytest: every collective with --check on 2/4 virtual nodes, hang watchdog, killed rank"
  timeout 200 "${PYTEST[@]}" tests/engines/nccl/test_gpu_direct.py -k "virtual_nodes or hang" >"$OUT/pytest-direct-vnodes.log" 2>&1
  record "direct engine on virtual nodes: exit $? | $(tail -1 "$OUT/pytest-direct-vnodes.log")"
  say "pytest: --ab, tune, SIGTERM, doctor on virtual nodes"
  timeout 360 "${PYTEST[@]}" tests/engines/nccl/test_gpu_vnodes_modes.py -k "not isolate" >"$OUT/pytest-modes.log" 2>&1
  record "modes on virtual nodes: exit $? | $(tail -1 "$OUT/pytest-modes.log")"
  grep -E "PASSED|FAILED|ERROR|^E " "$OUT/pytest-direct-vnodes.log" "$OUT/pytest-modes.log" | cut -c1-300 | head -40 | tee -a "$LOG"
else
  say "pytest: isolate with one slowed rank on 4 virtual nodes"
  timeout 560 "${PYTEST[@]}" tests/engines/nccl/test_gpu_vnodes_modes.py -k isolate --durations=0 >"$OUT/pytest-isolate.log" 2>&1
  record "isolate on virtual nodes: exit $? | $(tail -1 "$OUT/pytest-isolate.log")"
  grep -E "PASSED|FAILED|ERROR|^E |slowest|s call" "$OUT/pytest-isolate.log" | cut -c1-300 | head -30 | tee -a "$LOG"
fi
tar -czf "$OUT/vnode-logs-$PART.tgz" -C "$OUT" vnode-logs && rm -rf "$OUT/vnode-logs"; record "kept logs: $(tar tzf "$OUT/vnode-logs-$PART.tgz" | grep -c "\.log$") NCCL logs"
