#!/usr/bin/env bash
# Why whole runs of ours shift at small sizes (broadcast 8 B - 64 KB read 8.3 us in one run and 13.0 in another of five, 4x H200, issue 36): the same command under each CPU-binding policy (none, share, core), interleaved, 4 rounds, beside nccl-tests' broadcast; each run's median small-size time per collective. ~2 min.
#   benchmarks/gpu.sh spread_probe   # needs .whl/ and .gpurun/nccl-tests carried
# What comes back: summary.txt, spread_probe.log, spread-runs.tgz.
set -u
LOG="${OUT:-/tmp/gpufabric-out}/spread_probe.log"
source "$(dirname "$0")/gpu_lib.sh"
: > "$LOG"
gpu_python_setup
build_nccl_tests
B=$NT/build
R="$OUT/runs"; mkdir -p "$R"
SIZES=(-b 8 -e 64K -f 2 -n 20 -w 5)
MPI=(mpirun --allow-run-as-root --oversubscribe -np "$(nvidia-smi -L | wc -l)" -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE)
for round in 1 2 3 4; do
  timeout 40 "${MPI[@]}" "$B/broadcast_perf" "${SIZES[@]}" -c 0 -g 1 >"$R/nt-$round.txt" 2>&1
  record "nccl-tests broadcast round $round: exit $?, median $(small_median "$R/nt-$round.txt" broadcast) us"
  for policy in none share core; do
    t="o-$policy-$round"
    timeout 60 env GPUFABRIC_CPU_BIND=$policy $GF bench -c broadcast,reduce,all_reduce "${SIZES[@]}" --no-check --no-progress \
      --run-dir "$R/$t" >"$R/$t.txt" 2>&1
    record "gpufabric cpu_bind=$policy round $round: exit $?, median broadcast $(small_median "$R/$t.txt" broadcast) reduce $(small_median "$R/$t.txt" reduce) all_reduce $(small_median "$R/$t.txt" all_reduce) us"
  done
done
tar -czf "$OUT/spread-runs.tgz" -C "$OUT" runs 2>/dev/null && rm -rf "$R"
print_summary
