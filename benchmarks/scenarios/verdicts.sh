#!/usr/bin/env bash
# The GPU tests of issues 32 and 33 on 4 GPUs: every result judged (judge), isolate and certify beside a load (localise).
#   benchmarks/gpu.sh verdicts:judge     # ~5 min: node snapshot, every result judged with no --instance-type
#                                        # (bench + doctor, --self-test, --ab), NIC traffic in the nccl engine,
#                                        # the direct engine's regression tests
#   benchmarks/gpu.sh verdicts:localise  # ~8 min: isolate beside a real matmul load (heavy, light), certify of
#                                        # 4 one-GPU nodes (clean, loaded GPU, one misconfigured node)
# Needs .whl/ carried. What comes back: summary.txt, verdicts.log, pytest logs. (Was gpu_verdicts.sh.)
MODE="${1:-judge}"
say "host $(hostname) $(date -u +%FT%TZ) mode $MODE: $(timeout 30 nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1), $(timeout 30 nvidia-smi -L | wc -l) GPUs"
gpu_pytest() {  # NAME TIMEOUT FILES...: one pytest run, its log kept, its last line recorded
  local name=$1 limit=$2; shift 2
  PYTEST_TIMEOUT=$limit timeout "$limit" python3 -m pytest -m gpu -s -q -p no:cacheprovider -o addopts="-ra" "$@" \
    >"$OUT/pytest-$name.log" 2>&1
  record "pytest $name: exit $? | $(tail -1 "$OUT/pytest-$name.log")"
}
if [ "$MODE" = judge ]; then
  timeout 60 $GF snapshot --no-metadata >"$OUT/snapshot.txt" 2>&1
  record "snapshot: exit $? | $(head -3 "$OUT/snapshot.txt" | tr '\n' ' ' | cut -c1-180)"
  gpu_pytest expected 300 tests/engines/nccl/test_gpu_expected.py tests/hardware/test_detect_gpu.py
  grep -hE "expected|judged|of .*ceiling" "$OUT/pytest-expected.log" | head -30 >>"$OUT/summary.txt"
  gpu_pytest traffic 240 tests/engines/nccl/test_gpu_nic_traffic.py tests/engines/nccl/test_gpu_direct.py
  grep -hE "NIC traffic|lo " "$OUT/pytest-traffic.log" | head -6 >>"$OUT/summary.txt"
else
  # one run of each (the 3 + 3 runs of the target: benchmarks/gpu.sh isolate_load)
  gpu_pytest isolate 200 tests/analysis/isolate/test_isolate_gpu_load.py -k "clean or heavy1 or light1"
  grep -h "^RUN " "$OUT/pytest-isolate.log" | cut -c1-300 >>"$OUT/summary.txt"
  gpu_pytest certify 400 tests/engines/nccl/test_gpu_certify.py
  grep -hE "elapsed|certif|pass|fail|slow|parity" "$OUT/pytest-certify.log" | tail -20 >>"$OUT/summary.txt"
fi
