#!/usr/bin/env bash
# What one GPU proves on the torch engine: gpu tests, bench with no arguments, the memory check, SIGTERM, doctor.
# The gpu-marked suite's one-GPU files (multi-GPU cases skip themselves), `gpufabric bench` with no arguments
# on real NCCL, the up-front memory check against the GPU's memory, SIGTERM on NCCL ranks (no rank left
# behind), and the doctor on a real one-host NCCL log with a fabric expected (must WARN, not FAIL).
#   benchmarks/gpu.sh single          # ~5 min on nvidia-h100-x1 / nvidia-h200; needs .whl/ carried
# What comes back: summary.txt, single.log, pytest-gpu.log, runs.tgz. (Was gpu_single.sh.)
LOG="$OUT/single.log"
: > "$LOG"
say "host $(hostname) $(date -u +%FT%TZ)"
timeout 30 nvidia-smi -L 2>&1 | tee -a "$LOG"
timeout 60 python3 -c "import torch; print('torch', torch.__version__, 'nccl', torch.cuda.nccl.version(), \
'gpus', torch.cuda.device_count())" 2>&1 | tee -a "$LOG"

say "pytest -m gpu"
timeout 300 python3 -m pytest -m gpu -q -p no:cacheprovider -o addopts="-ra" \
  tests/bench/test_gpu_engine.py tests/bench/test_ab_gpu.py tests/train/test_gpu_train.py \
  tests/engines/nccl_tests/test_nccl_tests_engine.py >"$OUT/pytest-gpu.log" 2>&1
record "pytest -m gpu: exit $? | $(tail -1 "$OUT/pytest-gpu.log")"

say "gpufabric bench (no arguments), NCCL_DEBUG=INFO kept in the run dir"
timeout 180 $GF bench --run-dir "$OUT/noargs" >"$OUT/bench-noargs.txt" 2>>"$LOG"
record "bench (no args): exit $? | $(grep -c '^ *[0-9]' "$OUT/bench-noargs.txt") rows"
tail -12 "$OUT/bench-noargs.txt" | tee -a "$LOG"

say "memory check: -e 1T must be refused before any rank starts"
timeout 60 $GF bench -c all_reduce -b 1G -e 1T --dry-run >"$OUT/mem.txt" 2>&1
record "bench -e 1T --dry-run: exit $? (want 2) | $(tail -1 "$OUT/mem.txt")"

say "SIGTERM during a run on NCCL ranks"
$GF bench -c all_reduce -b 256M -e 1G --iters 20000 --run-dir "$OUT/sigterm" >"$OUT/sigterm.txt" 2>&1 &
pid=$!
sleep 20
kill -TERM $pid
for _ in $(seq 1 30); do kill -0 $pid 2>/dev/null || break; sleep 1; done
wait $pid; rc=$?
left=$(pgrep -f "gpufabric.engines.torch.rank" | wc -l)
record "SIGTERM: exit $rc (want 143), ranks left $left (want 0) | $(tail -1 "$OUT/sigterm.txt")"
pkill -9 -f gpufabric.engines.torch.rank 2>/dev/null

say "doctor on the real one-host NCCL log, expecting EFA (must WARN: NET not exercised)"
timeout 60 $GF doctor "$OUT"/noargs/result.json "$OUT"/noargs/nccl/*.log --expect efa >"$OUT/doctor-efa.txt" 2>&1
record "doctor --expect efa on one host: exit $? (want 0) | $(grep -i -m1 'single host' "$OUT/doctor-efa.txt")"
timeout 60 $GF doctor "$OUT"/noargs/result.json "$OUT"/noargs/nccl/*.log >"$OUT/doctor.txt" 2>&1
record "doctor: exit $?"

# One archive of the run directories (NCCL logs become fixtures), within the 8-file limit of $OUT.
tar -czf "$OUT/runs.tgz" -C "$OUT" noargs sigterm 2>/dev/null && rm -rf "$OUT/noargs" "$OUT/sigterm"

