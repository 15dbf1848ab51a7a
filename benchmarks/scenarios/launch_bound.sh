#!/usr/bin/env bash
# Which sizes are launch-bound, as `bench` now says in a note (issue 36): every collective 8 B - 1 GB in the default mode, twice, the launch-bound note of each, then 8 B - 1 MB replayed as CUDA graphs (no size may be named there), a side-by-side pair with nccl-tests (eager, and its own -G 1 graph replay at 8 B - 1 MB), and the GPU tests of the note and of GPUFABRIC_BUFFERS=nccl. ~2 min on 2 GPUs.
#   benchmarks/gpu.sh launch_bound   # needs .whl/ and .gpurun/nccl-tests carried
# What comes back: summary.txt, launch_bound.log, pytest-gpu-launch-bound.log, launch-runs.tgz, and pair.tgz
# (the side-by-side pair: nt-{all_reduce,broadcast}.txt, ours-{all_reduce,broadcast}.json).
set -u
LOG="${OUT:-/tmp/gpufabric-out}/launch_bound.log"
source "$(dirname "$0")/gpu_lib.sh"
: > "$LOG"
gpu_python_setup
host_header
R="$OUT/runs"; mkdir -p "$R"
TEN=all_reduce,all_gather,reduce_scatter,alltoall,broadcast,reduce,gather,scatter,sendrecv,alltoallv
# notes RUN: the launch-bound lines of a run's result, one per collective, shortened to what they name.
notes() {
  python3 - "$1/result.json" <<'PY'
import json, sys
notes = json.load(open(sys.argv[1]))["metadata"]["notes"]
bound = [n.split(": the slowest")[0] + " [" + n.split("issuing its call (")[1].split(")")[0] + "]" for n in notes if "launch-bound" in n]
print("; ".join(bound) or "none")
PY
}
for run in 1 2; do
  timeout 90 $GF bench -c "$TEN" -b 8 -e 1G -f 2 -n 20 -w 5 --no-check --no-progress --run-dir "$R/o-$run" >"$R/o-$run.txt" 2>&1
  record "default mode run $run: exit $?, launch-bound: $(notes "$R/o-$run")"
done
timeout 90 $GF bench -c "$TEN" -b 8 -e 1M -f 2 -n 20 -w 5 --graph --no-check --no-progress --run-dir "$R/graph" >"$R/graph.txt" 2>&1
record "graph 8 B - 1 MB: exit $?, launch-bound: $(notes "$R/graph")"
# A side-by-side pair kept as a test fixture of `gpufabric compare`'s launch-bound note: nccl-tests and ours,
# all_reduce and broadcast 8 B - 128 MB, -n 20 (ours with each size's hosts' issue time in its result).
build_nccl_tests
P="$OUT/pair"; mkdir -p "$P"
for c in all_reduce broadcast; do
  timeout 60 "${NT_MPI[@]}" "$NT/build/${c}_perf" -b 8 -e 128M -f 2 -n 20 -w 5 -c 0 -g 1 >"$P/nt-$c.txt" 2>&1
  record "nccl-tests $c 8 B - 128 MB: exit $?"
  timeout 90 $GF bench -c "$c" -b 8 -e 128M -f 2 -n 20 -w 5 --no-check --no-progress --run-dir "$R/pair-$c" \
    >"$R/pair-$c.txt" 2>&1
  record "gpufabric $c 8 B - 128 MB: exit $?, launch-bound: $(notes "$R/pair-$c")"
  cp "$R/pair-$c/result.json" "$P/ours-$c.json" 2>/dev/null
  # nccl-tests' own graph replay (-G 1: the 20 calls captured, one launch): is its eager time its host's?
  timeout 60 "${NT_MPI[@]}" "$NT/build/${c}_perf" -b 8 -e 1M -f 2 -n 20 -w 5 -c 0 -g 1 -G 1 >"$P/nt-$c-graph.txt" 2>&1
  record "nccl-tests $c 8 B - 1 MB -G 1: exit $?, median 8 B - 64 KB $(small_median "$P/nt-$c-graph.txt" "$c") us (eager: $(small_median "$P/nt-$c.txt" "$c"))"
done
if python3 -c "import pytest" 2>/dev/null; then
  timeout 180 python3 -m pytest -m gpu tests/engines/nccl/test_gpu_direct.py -k "launch_bound or ncclmemalloc" -q \
    -p no:cacheprovider -o addopts="-ra" >"$OUT/pytest-gpu-launch-bound.log" 2>&1
  record "pytest -m gpu test_gpu_direct.py -k 'launch_bound or ncclmemalloc': exit $? | $(tail -1 "$OUT/pytest-gpu-launch-bound.log")"
fi
tar -czf "$OUT/launch-runs.tgz" -C "$OUT" runs 2>/dev/null && rm -rf "$R"
tar -czf "$OUT/pair.tgz" -C "$OUT" pair 2>/dev/null && rm -rf "$P"
print_summary
