#!/usr/bin/env bash
# Issue 36 item 2, a short look (after benchmarks/gpu.sh startup in the same call, which built nccl-tests):
# all_reduce, reduce and broadcast at 8 B - 64 KB (-n 20 -w 5, default mode), ours beside nccl-tests
# (`mpirun -np 4`, -c 0), once each, alternated; benchmarks/side_by_side.py's summary lines.
#   benchmarks/gpu.sh startup; benchmarks/gpu.sh small_sizes     # nvidia-h100-x4; ~1 min after the build
set -u
LOG="${OUT:-/tmp/gpufabric-out}/small-sizes.log"
source "$(dirname "$0")/gpu_lib.sh"
: > "$LOG"
gpu_python_setup
R="$OUT/small"; mkdir -p "$R"
B=$NT/build
for c in all_reduce reduce broadcast; do
  timeout 40 mpirun --allow-run-as-root -np 4 -x NCCL_NVLS_ENABLE=0 -x LD_LIBRARY_PATH "$B/${c}_perf" \
    -b 8 -e 64K -f 4 -n 20 -w 5 -c 0 -g 1 >"$R/nt-$c.txt" 2>&1
  timeout 60 $GF bench -c "$c" -b 8 -e 64K -f 4 -n 20 -w 5 --no-check --no-progress --run-dir "$R/o-$c" >"$R/o-$c.txt" 2>&1
  rc=$?
  python3 benchmarks/side_by_side.py "$R/nt-$c.txt" "$R/o-$c/result.json" --collective "$c" >"$R/sbs-$c.md" 2>&1
  record "$c 8 B-64 KB: ours exit $rc | $(grep -ih summary "$R/sbs-$c.md" | tr '\n' ' ' | cut -c1-220)"
done
tar -czf "$OUT/small-runs.tgz" -C "$OUT" small 2>/dev/null
print_summary
