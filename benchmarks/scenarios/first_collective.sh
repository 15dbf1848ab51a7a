#!/usr/bin/env bash
# Why the first collective of a command reads ~10% slower at small sizes (reduce alone 12.0 us vs 10.8 after the nine others, 4x H200): reduce alone with the GPU-sharing watch on and off, and reduce after one all_reduce, alternated, 2 runs each, 8 B - 1 MB, and the SM clocks through one run of each kind. ~1.5 min.
#   benchmarks/gpu.sh first_collective   # needs .whl/ carried; no nccl-tests build
# What comes back: summary.txt, first_collective.log, first-runs.tgz.
set -u
LOG="${OUT:-/tmp/gpufabric-out}/first_collective.log"
source "$(dirname "$0")/gpu_lib.sh"
: > "$LOG"
gpu_python_setup
R="$OUT/runs"; mkdir -p "$R"
one() {  # one TAG SHARING COLLECTIVES
  timeout 40 env GPUFABRIC_GPU_SHARING="$2" $GF bench -c "$3" -b 8 -e 1M -f 2 -n 20 -w 5 --no-check --no-progress \
    --run-dir "$R/$1" >"$R/$1.txt" 2>&1
  record "$1 (watch $2, -c $3): exit $?, reduce median 8 B - 64 KB $(small_median "$R/$1.txt" reduce) us"
}
for run in 1 2; do
  one "alone-on-$run" on reduce
  one "alone-off-$run" off reduce
  one "after-all_reduce-$run" on all_reduce,reduce
done
# The GPUs' SM clocks every 50 ms through one more run of each kind (a clock ramping up through the first
# collective would read as this slowness).
for kind in alone after; do
  timeout 60 nvidia-smi --query-gpu=index,clocks.sm,power.draw --format=csv,noheader -lms 50 >"$R/clocks-$kind.csv" 2>&1 &
  watcher=$!
  sleep 0.5
  if [ "$kind" = alone ]; then one "clocked-alone" on reduce; else one "clocked-after" on all_reduce,reduce; fi
  kill $watcher 2>/dev/null; wait $watcher 2>/dev/null
  record "SM clocks during $kind (MHz, min/median/max over GPUs and samples): $(awk -F', ' '{print $2+0}' "$R/clocks-$kind.csv" | sort -n | awk '{a[NR]=$1} END {print a[1] "/" a[int((NR+1)/2)] "/" a[NR]}')"
done
tar -czf "$OUT/first-runs.tgz" -C "$OUT" runs 2>/dev/null && rm -rf "$R"
print_summary
