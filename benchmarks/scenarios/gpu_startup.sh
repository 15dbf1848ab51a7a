#!/usr/bin/env bash
# Start-up and exit (issue 36 item 1) on a 4-GPU machine (nvidia-h100-x4 or nvidia-h200-x4): the default
# `gpufabric bench` (8 B - 128 MB, x2, the direct NCCL engine) against nccl-tests built there,
# `mpirun -np N all_reduce_perf -b 8 -e 128M -f 2 -g 1`, alternated, one untimed warm-up each then 3 timed
# runs each: the whole command, the time to the first row, last row to exit (benchmarks/first_row.py), and
# our phase breakdown from each result's RunMetadata.phases, with the work rank 0 ran on threads beside
# them (benchmarks/startup_summary.py); our ranks start before their plan (launch.standby) and the summary
# says in how many runs rank 0 did. First the floor a rank cannot avoid here (a CUDA context per GPU,
# all four together, through cuda-bindings' runtime and through the driver's API as our rank makes it;
# libnccl's load; nvidia-smi -L alone and beside the contexts: benchmarks/cuda_context_probe.py), and the
# GPUs' persistence mode. Counts the warm-up's "never settled" notes in our 4 clean runs (issue 36 item 3).
# The two ratios the issue sets targets on are the last lines.
#   benchmarks/gpu.sh startup     # ~2 min after the nccl-tests build (~1.5 min); needs .whl/ and .gpurun/nccl-tests
# What comes back: summary.txt, startup.log, startup-runs.tgz (every command's output, run directories).
set -u
LOG="${OUT:-/tmp/gpufabric-out}/startup.log"
source "$(dirname "$0")/gpu_lib.sh"
: > "$LOG"
gpu_python_setup
say "host $(hostname) $(date -u +%FT%TZ): $(timeout 30 nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1) x $(timeout 30 nvidia-smi -L | wc -l)"
R="$OUT/runs"; mkdir -p "$R"
build_nccl_tests
record "nccl-tests build: exit $? ($(ls $NT/build/*_perf 2>/dev/null | wc -l) binaries)"
B=$NT/build
N=$(timeout 30 nvidia-smi -L | grep -c '^GPU ')
record "persistence mode: $(timeout 30 nvidia-smi --query-gpu=persistence_mode --format=csv,noheader | sort | uniq -c | tr -s ' \n' ' ')"
timeout 120 python3 benchmarks/cuda_context_probe.py --gpus "$N" > "$R/floor.jsonl" 2>&1
record "floor (fresh processes, one per GPU, together): exit $?"
while IFS= read -r l; do record "  $l"; done < "$R/floor.jsonl"
NTCMD=(mpirun --allow-run-as-root -np "$N" -x NCCL_NVLS_ENABLE=0 -x LD_LIBRARY_PATH "$B/all_reduce_perf" -b 8 -e 128M -f 2 -g 1)
FR="python3 benchmarks/first_row.py"
JSONL="$R/runs.jsonl"; : > "$JSONL"
DIRS=()
for i in 0 1 2 3; do  # run 0 warms the page cache and the byte-compiled files; 1-3 are timed
  if [ -x "$B/all_reduce_perf" ]; then
    line=$(timeout 60 $FR --label nccl-tests --log "$R/nt-$i.txt" -- "${NTCMD[@]}")
    say "nccl-tests run $i: $line"
    [ "$i" -gt 0 ] && echo "$line" >> "$JSONL"
  fi
  line=$(timeout 90 $FR --label gpufabric --log "$R/gf-$i.txt" -- $GF bench --run-dir "$R/gf-$i")
  say "gpufabric run $i: $line"
  if [ "$i" -gt 0 ]; then echo "$line" >> "$JSONL"; DIRS+=("$R/gf-$i"); fi
done
unsettled=0
for i in 0 1 2 3; do unsettled=$((unsettled + $(cat "$R/gf-$i.txt" 2>/dev/null | grep -c 'never settled'))); done
record "warm-up 'never settled' notes in our 4 clean runs: $unsettled (issue 36 item 3: 0 wanted); GPU-sharing notes: $(cat "$R"/gf-*.txt 2>/dev/null | grep -c 'another process') (0 wanted)"
timeout 60 python3 benchmarks/startup_summary.py "$JSONL" "${DIRS[@]}" > "$R/summary.md" 2>&1
record "startup summary: exit $?"
while IFS= read -r l; do record "$l"; done < "$R/summary.md"
tar -czf "$OUT/startup-runs.tgz" -C "$OUT" runs 2>/dev/null && rm -rf "$R"
print_summary
