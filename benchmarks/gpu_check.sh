#!/usr/bin/env bash
# The direct engine's device-side --check, whole-command time and GPU memory, side by side with
# nccl-tests built on the same lent GPU machine (issue 15's remaining figures).
#   benchmarks/gpu_check.sh        # ~9 min on one H100
# Needs .whl/ (wheels for the image's Python) and .gpurun/nccl-tests (NVIDIA/nccl-tests source), carried.
# Every step is bounded by `timeout`; logs go under $OUT; a short summary is printed LAST.
set -u
LOG="${OUT:-/tmp/gpufabric-out}/check.log"
source "$(dirname "$0")/gpu_lib.sh"
: > "$LOG"
gpu_python_setup
say "host $(hostname) $(date -u +%FT%TZ); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
build_nccl_tests &
BUILD=$!

say "pytest -m gpu: the check kernels, the direct engine (1 rank, 2/4 virtual nodes, faults)"
timeout 360 python3 -m pytest -m gpu -q -p no:cacheprovider -o addopts="-ra" \
  tests/engines/nccl/test_gpu_device_check.py tests/engines/nccl/test_gpu_direct.py >"$OUT/pytest-gpu.log" 2>&1
record "pytest -m gpu direct + device check: exit $? | $(tail -1 "$OUT/pytest-gpu.log")"
grep -E "^(FAILED|ERROR|E )" "$OUT/pytest-gpu.log" | head -12 | tee -a "$LOG"

say "1 rank, every collective, --check on the device, 8 B - 64 MB"
timeout 120 $GF bench --engine nccl -c all,gather,scatter,alltoallv -b 8 -e 64M -f 8 -n 20 --batches 1 \
  --run-dir "$OUT/c1" >"$OUT/c1.txt" 2>>"$LOG"
record "1 rank --check: exit $? | $(grep -c '^ *[0-9]' "$OUT/c1.txt") rows | $(grep -o -- '--check ran on [a-z ]*' "$OUT/c1/result.json" | head -1)"
for chk in --check --no-check; do
  t0=$(now); timeout 120 $GF bench --engine nccl -b 1G -e 4G -f 2 -n 5 -w 2 --batches 1 $chk --run-dir "$OUT/big$chk" >/dev/null 2>>"$LOG"
  record "1 rank 1-4 GB all_reduce $chk: exit $? wall $(since $t0) s"
done

wait $BUILD; record "nccl-tests build: exit $? | $(ls $NT/build/*_perf 2>/dev/null | wc -l) binaries"
B=$NT/build
if [ -x $B/all_reduce_perf ]; then
  say "2 virtual nodes, all_reduce 8 B - 256 MB: nccl-tests (-c 1) vs ours (--batches 1), whole command incl. MPS start"
  MPI=$(mpirun_vnodes 2)
  for run in 1 2; do
    mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
    t0=$(now); nvidia-cuda-mps-control -d
    t1=$(now); timeout 120 $MPI $B/all_reduce_perf -b 8 -e 256M -f 2 -n 20 -w 5 -c 1 -g 1 >"$OUT/nt2-$run.txt" 2>&1; rc=$?; t2=$(now)
    echo quit | nvidia-cuda-mps-control; sleep 1
    record "run $run nccl-tests 2 vnodes -c 1: exit $rc wall $(python3 -c "print(round($t2-$t1,2))") s (+MPS start: $(python3 -c "print(round($t2-$t0,2))") s)"
    unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
    for chk in --check --no-check; do
      t0=$(now); timeout 180 $GF bench --engine nccl --virtual-nodes 2 --mps -b 8 -e 256M -f 2 -n 20 -w 5 --batches 1 $chk \
        --run-dir "$OUT/o2-$run$chk" >/dev/null 2>>"$LOG"; rc=$?
      record "run $run gpufabric 2 vnodes --batches 1 $chk: exit $rc wall $(since $t0) s"
    done
    export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps/pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps/log
  done
  unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
  python3 benchmarks/side_by_side.py "$OUT/nt2-2.txt" "$OUT/o2-2--check/result.json" > "$OUT/sbs.md" 2>&1
  record "$(grep -h summary "$OUT/sbs.md" | tr '\n' ' ')"
fi

say "GPU memory at -e 8G (nvidia-smi every 10 ms), host RSS, time to the first row, one-size whole command"
sample() { nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 10 > "$1" 2>/dev/null & echo $!; }
rss() { peak=0; while true; do for p in $(pgrep -f "$1"); do r=$(awk '/VmRSS/{print $2}' /proc/$p/status 2>/dev/null); [ "${r:-0}" -gt $peak ] && peak=$r; done; echo $peak > "$2"; sleep 0.1; done; }
base=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | head -1)
S=$(sample "$OUT/gpu-ours.txt"); rss "engines.nccl.rank" "$OUT/rss-ours.txt" & R=$!
t0=$(now); timeout 180 $GF bench --engine nccl -b 8G -e 8G -n 5 -w 1 --batches 1 --no-check --run-dir "$OUT/r8" >/dev/null 2>>"$LOG" & P=$!; first=""
while kill -0 $P 2>/dev/null; do
  if [ -z "$first" ] && grep -q '"record":"row"' "$OUT/r8/result.jsonl" 2>/dev/null; then first=$(since $t0); fi; sleep 0.05; done
wait $P; rc=$?; kill $S $R
record "ours -e 8G: exit $rc, GPU MiB before $base, peak $(sort -n "$OUT/gpu-ours.txt" | tail -1), rank RSS peak KB $(cat "$OUT/rss-ours.txt"), first row at ${first}s"
if [ -x $B/all_reduce_perf ]; then
  S=$(sample "$OUT/gpu-nt.txt"); rss "all_reduce_perf" "$OUT/rss-nt.txt" & R=$!
  timeout 120 $B/all_reduce_perf -b 8G -e 8G -n 5 -w 1 -c 0 -g 1 > "$OUT/nt8.txt" 2>&1; rc=$?; kill $S $R
  record "nccl-tests -e 8G: exit $rc, peak GPU MiB $(sort -n "$OUT/gpu-nt.txt" | tail -1), RSS peak KB $(cat "$OUT/rss-nt.txt")"
  t0=$(now); timeout 60 $B/all_reduce_perf -b 8 -e 8 -n 5 -w 1 -c 0 -g 1 >/dev/null 2>&1
  record "nccl-tests one 8 B size, whole command: $(since $t0) s"
fi
t0=$(now); timeout 60 $GF bench --engine nccl -b 8 -e 8 -n 5 -w 1 --batches 1 --no-check --run-dir "$OUT/r1" >/dev/null 2>&1
record "ours one 8 B size, whole command: $(since $t0) s"
t0=$(now); timeout 60 python3 -c "import gpufabric.cli.app" ; record "import of the CLI: $(since $t0) s"
t0=$(now); timeout 60 python3 -X importtime -c "import gpufabric.engines.nccl.rank" 2>"$OUT/importtime-rank.txt"; record "import of the rank program: $(since $t0) s"
sort -t'|' -k2 -n -r "$OUT/importtime-rank.txt" | head -15 >> "$LOG"
timeout 60 python3 -m cProfile -o "$OUT/cli-1size.prof" -m gpufabric.cli bench --engine nccl -b 8 -e 8 -n 5 -w 1 --batches 1 --no-check --run-dir "$OUT/r1p" >/dev/null 2>&1
python3 -c "import pstats; pstats.Stats('$OUT/cli-1size.prof').sort_stats('cumulative').print_stats(25)" > "$OUT/cli-1size.txt" 2>&1

tar -czf "$OUT/runs.tgz" -C "$OUT" c1 r8 o2-2--check o2-2--no-check nt2-1.txt nt2-2.txt nt8.txt rss-nt.txt rss-ours.txt gpu-nt.txt gpu-ours.txt cli-1size.prof importtime-rank.txt nccl-tests-build.log 2>/dev/null && rm -rf "$OUT"/nt2-* "$OUT"/nt8.txt "$OUT"/rss-* "$OUT"/gpu-*.txt "$OUT"/cli-1size.prof "$OUT"/importtime-rank.txt "$OUT"/nccl-tests-build.log "$OUT"/c1 "$OUT"/r8 "$OUT"/o2-* "$OUT"/big* "$OUT"/r1 "$OUT"/r1p
print_summary
