#!/usr/bin/env bash
# Issue 33's isolate target on a 4-GPU machine: 4 one-GPU nodes over NVLink, a matmul loop on GPU 3, runs clean, heavy x3, light x3 (alternating) in one call at the median+tail10 default.
#   benchmarks/gpu.sh isolate_load      # nvidia-h100-x4, ONE call; ~5.5 min expected (7 searches of 3-6
#                                       # rounds at ~10 s a round), pytest stopped at 440 s whatever happens
# Prints one line per run (RUN name: verdict, rounds, seconds, exit, accused) as it ends, and keeps every
# run's isolate.json and its rounds' round.json (each group's batch times) in $OUT/runs.tgz, with the
# per-round job seconds against timed seconds in pytest-isolate.txt (where a round's time goes), and each
# round's iterations per batch (about 36 for 5 ms batches of 64 MB alltoall; 1 in the 09:10 UTC run).
# The target is met when: RUN clean convicts nothing; every RUN heavyN and lightN reads
# "verdict node node0003" (nothing else convicted, no link), at most 6 rounds, exit 1, accused ['node0003'].
set -u
LOG="${OUT:-/tmp/gpufabric-out}/isolate-load.log"
source "$(dirname "$0")/gpu_lib.sh"
: > "$LOG"
gpu_python_setup
say "host $(hostname) $(date -u +%FT%TZ): $(timeout 30 nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1) x$(nvidia-smi -L | wc -l)"
t0=$(now)
export ISOLATE_GPU_KEEP=/tmp/isolate-load-runs
rm -rf "$ISOLATE_GPU_KEEP"; mkdir -p "$ISOLATE_GPU_KEEP"
PYTEST_TIMEOUT=900 timeout 440 python3 -m pytest -m gpu -s -p no:cacheprovider -q -rxX \
  tests/analysis/isolate/test_isolate_gpu_load.py ${ISOLATE_K:+-k "$ISOLATE_K"} >"$OUT/pytest-isolate.txt" 2>&1
record "pytest test_isolate_gpu_load: exit $? wall $(since "$t0") s | $(tail -1 "$OUT/pytest-isolate.txt" | cut -c1-160)"
tar -czf "$OUT/runs.tgz" -C "$ISOLATE_GPU_KEEP" . 2>/dev/null
grep '^RUN ' "$OUT/pytest-isolate.txt" | cut -c1-300 >>"$OUT/summary.txt"
print_summary
grep '^RUN ' "$OUT/pytest-isolate.txt" | cut -c1-300
