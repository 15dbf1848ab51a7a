#!/usr/bin/env bash
# GPU memory and host RSS at -e 8G, time to the first row, and the whole command for one size: ours and nccl-tests.
#   benchmarks/gpu.sh memory     # ~3 min on one H100; needs .whl/ and .gpurun/nccl-tests carried
# One GPU, the direct engine (torch-free) against all_reduce_perf: nvidia-smi every 0.1 s and the ranks'
# VmRSS, when the first row reaches result.jsonl, imports of the CLI and the rank program (byte-compiled,
# as pip installs), one 8 B size end to end, and a cProfile of that command.
# What comes back: summary.txt, memory.log, memory-runs.tgz.
# (Was benchmarks/gpu_memory.sh, the last part of gpu_check.sh and the start-up part of gpu_final.sh.)
build_nccl_tests
R="$OUT/mem"; mkdir -p "$R"
B=$NT/build
base=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | head -1)
peak_watch "engines.nccl.rank" "$R/peak-ours.txt" & W=$!
t0=$(now); timeout 180 $GF bench --engine nccl -b 8G -e 8G -n 5 -w 1 --batches 1 --no-check --run-dir "$R/r8" >/dev/null 2>>"$LOG" & P=$!
first=""
while kill -0 $P 2>/dev/null; do
  if [ -z "$first" ] && grep -q '"record":"row"' "$R/r8/result.jsonl" 2>/dev/null; then first=$(since "$t0"); fi; sleep 0.05
done
wait $P; rc=$?; kill $W
record "ours -e 8G: exit $rc, GPU MiB before $base, peak GPU MiB / rank RSS KB: $(cat "$R/peak-ours.txt"), first row at ${first}s"
if [ -x "$B/all_reduce_perf" ]; then
  peak_watch "all_reduce_perf" "$R/peak-nt.txt" & W=$!
  timeout 120 $B/all_reduce_perf -b 8G -e 8G -n 5 -w 1 -c 0 -g 1 > "$R/nt8.txt" 2>&1; rc=$?; kill $W
  record "nccl-tests -e 8G -c 0: exit $rc, peak GPU MiB / RSS KB: $(cat "$R/peak-nt.txt")"
  t0=$(now); timeout 60 $B/all_reduce_perf -b 8 -e 8 -n 5 -w 1 -c 0 -g 1 >/dev/null 2>&1
  record "nccl-tests one 8 B size, whole command: $(since "$t0") s"
fi
t0=$(now); timeout 60 $GF bench --engine nccl -b 8 -e 8 -n 5 -w 1 --batches 1 --no-check --run-dir "$R/r1" >/dev/null 2>&1
record "ours one 8 B size, whole command: $(since "$t0") s"
t0=$(now); timeout 60 python3 -c "import gpufabric.cli.app"; record "import of the CLI (byte-compiled): $(since "$t0") s"
t0=$(now); timeout 60 python3 -X importtime -c "import gpufabric.engines.nccl.rank" 2>"$R/importtime-rank.txt"
record "import of the rank program: $(since "$t0") s"
sort -t'|' -k2 -n -r "$R/importtime-rank.txt" | head -15 >> "$LOG"
timeout 60 python3 -m cProfile -o "$R/cli-1size.prof" -m gpufabric.cli bench --engine nccl -b 8 -e 8 -n 5 -w 1 --batches 1 --no-check --run-dir "$R/r1p" >/dev/null 2>&1
python3 -c "import pstats; pstats.Stats('$R/cli-1size.prof').sort_stats('cumulative').print_stats(25)" > "$R/cli-1size.txt" 2>&1
rm -rf "$R/r1" "$R/r1p" "$OUT/nccl-tests-build.log"
tar -czf "$OUT/memory-runs.tgz" -C "$OUT" mem 2>/dev/null && rm -rf "$R"
