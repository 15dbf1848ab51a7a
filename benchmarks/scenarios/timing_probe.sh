#!/usr/bin/env bash
# Why small sizes read ~10% above nccl-tests (issue 36 item 2): four collectives 8 B - 8 MB side by side with
# nccl-tests built there, ours with the C launch loop (the default) and the Python loop
# (GPUFABRIC_LAUNCH_LOOP=python), at -n 20 (2 runs each) and -n 200 (1 run each). ~2.5 min on 4 GPUs.
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
FOUR=(all_gather sendrecv scatter alltoall)
build_nccl_tests
B=$NT/build
record "nccl-tests build: exit $? ($(ls $B/*_perf 2>/dev/null | wc -l) binaries)"
MPI=(mpirun --allow-run-as-root --oversubscribe -np "$N" -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE)
nt() {  # nt TAG ITERS [mpirun options]: the four binaries, one file each
  local tag=$1 iters=$2; shift 2
  for c in "${FOUR[@]}"; do
    timeout 45 "${MPI[@]}" "$@" "$B/${c}_perf" -b 8 -e 8M -f 4 -n "$iters" -w 5 -c 0 -g 1 >"$R/nt-$tag-$c.txt" 2>&1
  done
  record "nccl-tests $tag: done"
}
ours() {  # ours TAG [options...]
  local tag=$1; shift
  timeout 90 env "${OURS_ENV[@]}" $GF bench -c all_gather,sendrecv,scatter,alltoall -b 8 -e 8M -f 4 -w 5 --no-check \
    --no-progress --run-dir "$R/o-$tag" "$@" >"$R/o-$tag.txt" 2>&1
  record "gpufabric $tag: exit $?, never-settled notes $(grep -c 'never settled' "$R/o-$tag.txt")"
}
files() { printf "$R/nt-$1-%s.txt," "${FOUR[@]}"; }
OURS_ENV=(GPUFABRIC_PROBE=1)
PY=(GPUFABRIC_LAUNCH_LOOP=python)
for run in 1 2; do
  nt "b$run" 20
  ours "c-$run" -n 20
  OURS_ENV=("${PY[@]}"); ours "py-$run" -n 20; OURS_ENV=(GPUFABRIC_PROBE=1)
done
nt n200 200
ours c-n200 -n 200
OURS_ENV=("${PY[@]}"); ours py-n200 -n 200; OURS_ENV=(GPUFABRIC_PROBE=1)
record "launch loop notes: C runs: $(grep -h 'launch loop:' "$R"/o-c-1.txt | cut -c1-90); Python runs: $(grep -h 'launch loop:' "$R"/o-py-1.txt | cut -c1-60)"
ratio() {  # ratio NAME THEIRS... -- OURS...
  local name=$1; shift; local theirs=() o=()
  while [ "$1" != -- ]; do theirs+=("$1"); shift; done; shift; o=("$@")
  timeout 60 python3 benchmarks/timing_ratios.py --theirs "${theirs[@]}" --ours "${o[@]}" >"$OUT/probe-$name.md" 2>&1
  record "$name: $(grep -h '^summary' "$OUT/probe-$name.md" | sed 's/size-placements within/within/; s/; gpufabric.*//' | tr '\n' ';' | cut -c1-400)"
}
NT2=("$(files b1)" "$(files b2)")
ratio c-loop "${NT2[@]}" -- "$R/o-c-1/result.json" "$R/o-c-2/result.json"
ratio python-loop "${NT2[@]}" -- "$R/o-py-1/result.json" "$R/o-py-2/result.json"
ratio c-n200 "$(files n200)" -- "$R/o-c-n200/result.json"
ratio python-n200 "$(files n200)" -- "$R/o-py-n200/result.json"
tar -czf "$OUT/probe-runs.tgz" -C "$OUT" runs 2>/dev/null && rm -rf "$R"
print_summary
