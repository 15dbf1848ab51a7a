#!/usr/bin/env bash
# Which sizes are launch-bound, as `bench` now says in a note (issue 36): every collective 8 B - 1 GB in the default mode, twice, the launch-bound note of each, then 8 B - 1 MB replayed as CUDA graphs (no size may be named there), and the GPU test of the note. ~1.5 min on 2 GPUs.
#   benchmarks/gpu.sh launch_bound   # needs .whl/ carried; no nccl-tests build
# What comes back: summary.txt, launch_bound.log, pytest-gpu-launch-bound.log, launch-runs.tgz.
set -u
LOG="${OUT:-/tmp/gpufabric-out}/launch_bound.log"
source "$(dirname "$0")/gpu_lib.sh"
: > "$LOG"
gpu_python_setup
N=$(timeout 30 nvidia-smi -L | wc -l)
say "host $(hostname) $(date -u +%FT%TZ): $N x $(timeout 30 nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
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
if python3 -c "import pytest" 2>/dev/null; then
  timeout 180 python3 -m pytest -m gpu tests/engines/nccl/test_gpu_direct.py -k launch_bound -q -p no:cacheprovider \
    -o addopts="-ra" >"$OUT/pytest-gpu-launch-bound.log" 2>&1
  record "pytest -m gpu test_gpu_direct.py -k launch_bound: exit $? | $(tail -1 "$OUT/pytest-gpu-launch-bound.log")"
fi
tar -czf "$OUT/launch-runs.tgz" -C "$OUT" runs 2>/dev/null && rm -rf "$R"
print_summary
