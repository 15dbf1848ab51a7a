#!/usr/bin/env bash
# Small messages (8 B - 64 KB all_reduce) on several GPUs, three times each way: run-to-run noise or a gap.
# The exact mode at -n 20 (nccl-tests' loop, one batch), our default mode (-n 20, batches until stable),
# and nccl-tests -n 20 under mpirun (one process per GPU).
#   benchmarks/gpu.sh small-repeat   # ~2 min on 4 GPUs; needs .whl/ and .gpurun/nccl-tests carried
# What comes back: summary.txt, small-sbs.md, small-runs.tgz. (Was gpu_small_repeat.sh.)
G=$(timeout 30 nvidia-smi -L | wc -l)
build_nccl_tests  # first: a build beside the runs makes the host's launches noisy
R="$OUT/small"; mkdir -p "$R"
failed=0
for i in 1 2 3; do
  timeout 90 $GF bench --engine nccl --ranks "$G" -b 8 -e 64K -f 4 -n 20 -w 5 --batches 1 --no-check --run-dir "$R/exact$i" >/dev/null 2>>"$LOG" || failed=$?
  timeout 90 $GF bench --engine nccl --ranks "$G" -b 8 -e 64K -f 4 --no-check --run-dir "$R/default$i" >/dev/null 2>>"$LOG" || failed=$?
done
record "ours, 6 runs: last non-zero exit $failed (0: all passed)"
if [ ! -x "$NT/build/all_reduce_perf" ]; then record "no nccl-tests binary: nothing to compare"; print_summary; exit 1; fi
MPI="mpirun --allow-run-as-root -np $G -x NCCL_NVLS_ENABLE=0 -x LD_LIBRARY_PATH"
for i in 1 2 3; do
  timeout 60 $MPI $NT/build/all_reduce_perf -b 8 -e 64K -f 4 -n 20 -w 5 -c 0 -g 1 >"$R/nt$i.txt" 2>&1
done
for i in 1 2 3; do
  for way in exact default; do
    echo "### nccl-tests run $i vs ours $way run $i"; python3 benchmarks/side_by_side.py "$R/nt$i.txt" "$R/$way$i/result.json"
  done
done >"$OUT/small-sbs.md" 2>&1
record "$(grep -h summary "$OUT/small-sbs.md" | cut -c1-90 | tr '\n' ' ')"
tar -czf "$OUT/small-runs.tgz" -C "$OUT" small && rm -rf "$R"
