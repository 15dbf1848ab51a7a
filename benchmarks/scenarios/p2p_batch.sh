#!/usr/bin/env bash
# Is nccl-tests' short-batch speed at 1-16 MB a property of every point-to-point collective (issue 36)? On 2x H200 (2026-11-27 20:14) ours read alltoall 1.10-1.13x, sendrecv 1.08-1.10x and alltoallv 1.07x nccl-tests' -n 20 time at 1-8 MB, every spread under 6%: sendrecv, alltoall and alltoallv 1-16 MB by both tools at -n 20 and -n 200, two interleaved rounds, and nccl-tests at -n 20 with -N 5 (five batches a size, printed apart: are only first batches fast?). all_reduce beside them as the collective that agrees. ~1.5 min.
#   benchmarks/gpu.sh p2p_batch   # needs .whl/ and .gpurun/nccl-tests carried
# What comes back: summary.txt, p2p_batch.log, p2p-runs.tgz.
set -u
LOG="${OUT:-/tmp/gpufabric-out}/p2p_batch.log"
source "$(dirname "$0")/gpu_lib.sh"
: > "$LOG"
gpu_python_setup
host_header
build_nccl_tests
B=$NT/build
record "nccl-tests build: exit $? ($(ls $B/*_perf 2>/dev/null | wc -l) binaries), $N GPUs"
R="$OUT/runs"; mkdir -p "$R"
SIZES=(-b 1M -e 16M -f 2 -w 5)
# times FILE: "1M oop/ip 4M oop/ip 8M oop/ip" (the first table row of each size; both tools print nccl-tests' columns)
times() {
  awk '$1 == 1048576 || $1 == 4194304 || $1 == 8388608 { if (!seen[$1]++) printf "%s %s/%s  ", $1 / 1048576 "M", $6, $10 }' "$1"
}
for round in 1 2; do
  for c in sendrecv alltoall alltoallv all_reduce; do
    for n in 20 200; do
      timeout 60 "${NT_MPI[@]}" "$B/${c}_perf" "${SIZES[@]}" -n "$n" -c 0 -g 1 >"$R/nt-$c-n$n-$round.txt" 2>&1
      record "nccl-tests $c -n $n round $round: exit $?, $(times "$R/nt-$c-n$n-$round.txt")"
      batches=(); [ "$n" = 200 ] && batches=(--batches 1)
      timeout 90 $GF bench -c "$c" "${SIZES[@]}" -n "$n" "${batches[@]}" --no-check --no-progress \
        --run-dir "$R/o-$c-n$n-$round" >"$R/o-$c-n$n-$round.txt" 2>&1
      record "gpufabric $c -n $n${batches[*]:+ ${batches[*]}} round $round: exit $?, $(times "$R/o-$c-n$n-$round.txt")"
    done
  done
done
# -N 5: nccl-tests runs each size's batch of 20 five times in a row and prints each (its run_cycles).
for c in sendrecv alltoall; do
  timeout 60 "${NT_MPI[@]}" "$B/${c}_perf" -b 4M -e 4M -w 5 -n 20 -N 5 -c 0 -g 1 >"$R/nt-$c-cycles.txt" 2>&1
  record "nccl-tests $c 4 MB -n 20 -N 5: exit $?, out-of-place per cycle: $(awk '$1 == 4194304 {printf "%s ", $6}' "$R/nt-$c-cycles.txt")"
done
tar -czf "$OUT/p2p-runs.tgz" -C "$OUT" runs 2>/dev/null && rm -rf "$R"
print_summary
