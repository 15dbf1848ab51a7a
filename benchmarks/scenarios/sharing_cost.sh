#!/usr/bin/env bash
# Does the GPU-sharing watch (NVML polled from rank 0's process) slow small sizes? Ours with the watch and
# with GPUFABRIC_GPU_SHARING=off, alternated, 2 runs each, all_gather and broadcast 8 B - 1 MB. ~40 s.
#   benchmarks/gpu.sh sharing_cost   # needs .whl/ carried; no nccl-tests build
# What comes back: summary.txt, sharing_cost.log, sharing-runs.tgz.
set -u
LOG="${OUT:-/tmp/gpufabric-out}/sharing_cost.log"
source "$(dirname "$0")/gpu_lib.sh"
: > "$LOG"
gpu_python_setup
R="$OUT/runs"; mkdir -p "$R"
small() {  # median time of the 32 B - 32 KB rows of a printed table (out-of-place column)
  awk '$1 >= 32 && $1 <= 32768 && $6 ~ /^[0-9.]+$/ {print $6}' "$1" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}
for run in 1 2; do
  for mode in on off; do
    timeout 40 env GPUFABRIC_GPU_SHARING=$mode $GF bench -c all_gather,broadcast -b 8 -e 1M -f 4 -n 20 -w 5 --no-check \
      --no-progress --run-dir "$R/$mode-$run" >"$R/$mode-$run.txt" 2>&1
    record "watch $mode run $run: exit $?, median small-size time $(small "$R/$mode-$run.txt") us; $(grep -h 'GPU sharing not watched' "$R/$mode-$run.txt" | cut -c1-60)"
  done
done
tar -czf "$OUT/sharing-runs.tgz" -C "$OUT" runs 2>/dev/null && rm -rf "$R"
print_summary
