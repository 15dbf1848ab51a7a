#!/usr/bin/env bash
# The direct engine's device-side --check (1 rank, 2 virtual nodes) and its cost, beside nccl-tests -c 1 (issue 15).
#   benchmarks/gpu.sh check            # ~7 min on one H100; needs .whl/ and .gpurun/nccl-tests carried
#   benchmarks/gpu.sh check memory     # what benchmarks/gpu_check.sh measured (GPU memory, RSS: `memory`)
# The check kernels' gpu tests, every collective with --check on 1 rank, 1-4 GB with and without --check,
# and 2 virtual nodes 8 B - 256 MB twice: nccl-tests -c 1 (whole command, with and without the MPS start)
# and ours --check / --no-check. What comes back: summary.txt, check.log, pytest-gpu.log, runs.tgz, sbs.md.
build_nccl_tests
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
  record "1 rank 1-4 GB all_reduce $chk: exit $? wall $(since "$t0") s"
done

B=$NT/build
if [ -x "$B/all_reduce_perf" ]; then
  say "2 virtual nodes, all_reduce 8 B - 256 MB: nccl-tests (-c 1) vs ours (--batches 1), whole command incl. MPS start"
  MPI=$(mpirun_vnodes 2)
  for run in 1 2; do
    t0=$(now); mps_start
    t1=$(now); timeout 120 $MPI $B/all_reduce_perf -b 8 -e 256M -f 2 -n 20 -w 5 -c 1 -g 1 >"$OUT/nt2-$run.txt" 2>&1; rc=$?; t2=$(now)
    mps_stop
    record "run $run nccl-tests 2 vnodes -c 1: exit $rc wall $(python3 -c "print(round($t2-$t1,2))") s (+MPS start: $(python3 -c "print(round($t2-$t0,2))") s)"
    for chk in --check --no-check; do
      t0=$(now); timeout 180 $GF bench --engine nccl --virtual-nodes 2 --mps -b 8 -e 256M -f 2 -n 20 -w 5 --batches 1 $chk \
        --run-dir "$OUT/o2-$run$chk" >/dev/null 2>>"$LOG"; rc=$?
      record "run $run gpufabric 2 vnodes --batches 1 $chk: exit $rc wall $(since "$t0") s"
    done
  done
  python3 benchmarks/side_by_side.py "$OUT/nt2-2.txt" "$OUT/o2-2--check/result.json" > "$OUT/sbs.md" 2>&1
  record "$(grep -h summary "$OUT/sbs.md" | tr '\n' ' ')"
fi
tar -czf "$OUT/runs.tgz" -C "$OUT" c1 o2-2--check o2-2--no-check nt2-1.txt nt2-2.txt 2>/dev/null
rm -rf "$OUT"/nt2-* "$OUT"/c1 "$OUT"/o2-* "$OUT"/big* "$OUT/nccl-tests-build.log"
