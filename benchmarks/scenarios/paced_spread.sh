#!/usr/bin/env bash
# Why ours' run-to-run spread at sizes the GPUs pace is about twice nccl-tests' (issue 36; 2x H200 2026-11-27 20:34: median 1.1% against 0.5% over 218 size-placements, 16-32 MB 1.4-1.5% against 0.7%): six interleaved rounds of all_reduce and all_gather 1-64 MB by nccl-tests, ours in the default mode, and ours in the exact mode (one batch of -n 20, nccl-tests' loop). ~1.5 min on 2 GPUs.
#   benchmarks/gpu.sh paced_spread   # needs .whl/ and .gpurun/nccl-tests carried
#   benchmarks/gpu.sh paced_spread:buffers   # the third side is ours with GPUFABRIC_BUFFERS=nccl (ncclMemAlloc,
#     as nccl-tests 2.19 allocates its buffers) instead of the exact mode: is that the 1.5-4.9% at 2-32 MB?
# What comes back: summary.txt, paced_spread.log, paced-runs.tgz (and spread.md: per size, each side's spread).
set -u
LOG="${OUT:-/tmp/gpufabric-out}/paced_spread.log"
source "$(dirname "$0")/gpu_lib.sh"
: > "$LOG"
gpu_python_setup
host_header
build_nccl_tests
R="$OUT/runs"; mkdir -p "$R"
SIZES=(-b 1M -e 64M -f 2 -n 20 -w 5)
for round in 1 2 3 4 5 6; do
  for c in all_reduce all_gather; do
    timeout 60 "${NT_MPI[@]}" "$NT/build/${c}_perf" "${SIZES[@]}" -c 0 -g 1 >"$R/nt-$round-$c.txt" 2>&1
  done
  timeout 90 $GF bench -c all_reduce,all_gather "${SIZES[@]}" --no-check --no-progress --run-dir "$R/o-$round" \
    >"$R/o-$round.txt" 2>&1
  if [ "${1:-}" = buffers ]; then
    timeout 90 env GPUFABRIC_BUFFERS=nccl $GF bench -c all_reduce,all_gather "${SIZES[@]}" --no-check --no-progress \
      --run-dir "$R/x-$round" >"$R/x-$round.txt" 2>&1
  else
    timeout 90 $GF bench -c all_reduce,all_gather "${SIZES[@]}" --batches 1 --no-check --no-progress \
      --run-dir "$R/x-$round" >"$R/x-$round.txt" 2>&1
  fi
  record "round $round done"
done
nt_runs=(); o_runs=(); x_runs=()
for r in 1 2 3 4 5 6; do
  nt_runs+=("$R/nt-$r-all_reduce.txt,$R/nt-$r-all_gather.txt"); o_runs+=("$R/o-$r/result.json"); x_runs+=("$R/x-$r/result.json")
done
timeout 60 python3 benchmarks/timing_ratios.py --theirs "${nt_runs[@]}" --ours "${o_runs[@]}" >"$OUT/spread.md" 2>&1
timeout 60 python3 benchmarks/timing_ratios.py --theirs "${nt_runs[@]}" --ours "${x_runs[@]}" --label-ours "$([ "${1:-}" = buffers ] && echo ncclmemalloc || echo exact)" \
  >>"$OUT/spread.md" 2>&1
grep '^summary' "$OUT/spread.md" | while IFS= read -r line; do record "$line"; done
tar -czf "$OUT/paced-runs.tgz" -C "$OUT" runs 2>/dev/null && rm -rf "$R"
print_summary
