#!/usr/bin/env bash
# What shifts a whole run of ours at small sizes (broadcast 8 B - 64 KB: 8.3 us in one run, 13.0 in another of five on 4x H200, issue 36): 8 unbound runs of broadcast and reduce, each watched every 20 ms for the CPU every rank thread ran on (ps psr) and the GPUs' SM/memory clocks and P-state; one line per run to set the level beside what it ran on. ~2 min.
#   benchmarks/gpu.sh shift_probe   # needs .whl/ carried; no nccl-tests build
#   benchmarks/gpu.sh shift_probe:graph   # ~1.5 min: 6 rounds, each an eager run and a CUDA-graph run (--graph):
#     a run's shift that is the host's launch rate (the CPU it landed on) leaves the graph runs still
# What comes back: summary.txt, shift_probe.log, shift-runs.tgz.
set -u
LOG="${OUT:-/tmp/gpufabric-out}/shift_probe.log"
source "$(dirname "$0")/gpu_lib.sh"
: > "$LOG"
gpu_python_setup
R="$OUT/runs"; mkdir -p "$R"
lscpu -e=CPU,CORE,SOCKET,NODE >"$R/lscpu.txt" 2>&1
if [ "${1:-}" = graph ]; then
  for run in 1 2 3 4 5 6; do
    for mode in eager graph; do
      t="$mode-$run"; opts=(); [ "$mode" = graph ] && opts=(--graph)
      timeout 60 $GF bench -c broadcast,reduce -b 8 -e 64K -f 2 -n 20 -w 5 "${opts[@]}" --no-check --no-progress \
        --run-dir "$R/$t" >"$R/$t.txt" 2>&1
      record "round $run $mode: exit $?, broadcast $(small_median "$R/$t.txt" broadcast) reduce $(small_median "$R/$t.txt" reduce) us"
    done
  done
  tar -czf "$OUT/shift-runs.tgz" -C "$OUT" runs 2>/dev/null && rm -rf "$R"
  print_summary
  exit 0
fi
# watch_threads FILE: every 20 ms, "time pid tid psr comm" of every thread of the ranks, until killed
watch_threads() {
  while true; do
    for p in $(pgrep -f 'gpufabric.engines.nccl.rank'); do
      ps -L -o pid=,tid=,psr=,comm= -p "$p" 2>/dev/null | sed "s/^/$(date +%s.%N) /"
    done
    sleep 0.02
  done >"$1"
}
for run in 1 2 3 4 5 6 7 8; do
  t="o-$run"
  watch_threads "$R/$t.threads" & tw=$!
  timeout 60 nvidia-smi --query-gpu=index,clocks.sm,clocks.mem,pstate --format=csv,noheader -lms 20 >"$R/$t.clocks" 2>&1 & cw=$!
  timeout 60 $GF bench -c broadcast,reduce -b 8 -e 64K -f 2 -n 20 -w 5 --no-check --no-progress --run-dir "$R/$t" \
    >"$R/$t.txt" 2>&1
  rc=$?
  kill $tw $cw 2>/dev/null; wait $tw $cw 2>/dev/null
  # The main thread of each rank is the one whose tid is its pid: the CPUs it was seen on, per rank.
  cpus=$(awk '$2 == $3 {seen[$2] = seen[$2] " " $4} END {for (p in seen) print seen[p]}' "$R/$t.threads" \
    | while read -r line; do echo "$line" | tr ' ' '\n' | sort -n | uniq -c | sort -rn | head -2 | awk '{printf "%s(x%s) ", $2, $1}'; echo -n "| "; done)
  clocks=$(awk -F', ' '{print $2+0}' "$R/$t.clocks" | sort -n | awk '{a[NR]=$1} END {print a[1] "/" a[int((NR+1)/2)] "/" a[NR]}')
  record "run $run: exit $rc, broadcast $(small_median "$R/$t.txt" broadcast) reduce $(small_median "$R/$t.txt" reduce) us; rank main threads on CPUs (most seen): $cpus SM MHz min/median/max $clocks"
done
tar -czf "$OUT/shift-runs.tgz" -C "$OUT" runs 2>/dev/null && rm -rf "$R"
print_summary
