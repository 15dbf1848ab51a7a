#!/usr/bin/env bash
# Why small sizes read 10-40% above nccl-tests (issue 36 item 2): five collectives 8 B - 1 MB side by side with
# nccl-tests built there, mpirun's default binding against --bind-to none for nccl-tests, and our ranks
# unbound (GPUFABRIC_CPU_BIND=none), on an equal share of the CPUs (share) and on one core (core). ~2 min.
#   benchmarks/gpu.sh timing_probe   # needs .whl/ and .gpurun/nccl-tests carried
# What comes back: summary.txt, probe.log, probe-*.md (ratio tables), probe-runs.tgz.
set -u
LOG="${OUT:-/tmp/gpufabric-out}/probe.log"
source "$(dirname "$0")/gpu_lib.sh"
: > "$LOG"
gpu_python_setup
N=$(timeout 30 nvidia-smi -L | wc -l)
say "host $(hostname) $(date -u +%FT%TZ): $N x $(timeout 30 nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
R="$OUT/runs"; mkdir -p "$R"
FOUR=(all_gather alltoall broadcast reduce_scatter gather)
build_nccl_tests
B=$NT/build
record "nccl-tests build: exit $? ($(ls $B/*_perf 2>/dev/null | wc -l) binaries)"
MPI=(mpirun --allow-run-as-root --oversubscribe -np "$N" -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE)
nt() {  # nt TAG ITERS [mpirun options]: the four binaries, one file each
  local tag=$1 iters=$2; shift 2
  for c in "${FOUR[@]}"; do
    timeout 45 "${MPI[@]}" "$@" "$B/${c}_perf" -b 8 -e 1M -f 4 -n "$iters" -w 5 -c 0 -g 1 >"$R/nt-$tag-$c.txt" 2>&1
  done
  record "nccl-tests $tag: done"
}
ours() {  # ours TAG [options...]
  local tag=$1; shift
  timeout 90 env "${OURS_ENV[@]}" $GF bench -c "$(IFS=,; echo "${FOUR[*]}")" -b 8 -e 1M -f 4 -w 5 --no-check \
    --no-progress --run-dir "$R/o-$tag" "$@" >"$R/o-$tag.txt" 2>&1
  record "gpufabric $tag: exit $?, never-settled notes $(grep -c 'never settled' "$R/o-$tag.txt")"
}
files() { printf "$R/nt-$1-%s.txt," "${FOUR[@]}"; }
OURS_ENV=(GPUFABRIC_PROBE=1)
for run in 1 2; do
  nt "plain-$run" 20
  OURS_ENV=(GPUFABRIC_CPU_BIND=none); ours "none-$run" -n 20
  OURS_ENV=(GPUFABRIC_CPU_BIND=share); ours "share-$run" -n 20
done
nt unbound 20 --bind-to none
OURS_ENV=(GPUFABRIC_CPU_BIND=core); ours core -n 20
record "binding notes: $(grep -h 'CPU binding' "$R"/o-share-1.txt | cut -c1-80) | $(grep -h 'CPU binding' "$R"/o-core.txt | cut -c1-80)"
ratio() {  # ratio NAME THEIRS... -- OURS...
  local name=$1; shift; local theirs=() o=()
  while [ "$1" != -- ]; do theirs+=("$1"); shift; done; shift; o=("$@")
  timeout 60 python3 benchmarks/timing_ratios.py --theirs "${theirs[@]}" --ours "${o[@]}" >"$OUT/probe-$name.md" 2>&1
  record "$name: $(grep -h '^summary' "$OUT/probe-$name.md" | sed 's/size-placements within/within/; s/; gpufabric.*//' | tr '\n' ';' | cut -c1-400)"
}
PLAIN=("$(files plain-1)" "$(files plain-2)")
ratio none "${PLAIN[@]}" -- "$R/o-none-1/result.json" "$R/o-none-2/result.json"
ratio share "${PLAIN[@]}" -- "$R/o-share-1/result.json" "$R/o-share-2/result.json"
ratio core "${PLAIN[@]}" -- "$R/o-core/result.json"
ratio nt-unbound "${PLAIN[@]}" -- "$(files unbound)"
tar -czf "$OUT/probe-runs.tgz" -C "$OUT" runs 2>/dev/null && rm -rf "$R"
print_summary
