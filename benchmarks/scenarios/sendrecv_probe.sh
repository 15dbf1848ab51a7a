#!/usr/bin/env bash
# Why sendrecv reads 1.10-1.15x nccl-tests' time at 2-8 MB on 4 GPUs (issue 36; every other size and collective agrees): each suspect switched on one side at a time, 1 MB - 1 GB, two interleaved rounds: NCCL's INFO log (ours captures it always), CPU binding (mpirun binds, we do not), the GPU-sharing watch, the C launch loop, one batch like nccl-tests, 200 iterations, and both tools' NCCL TUNING/P2P lines at 4 MB. ~3 min on 4x H200.
#   benchmarks/gpu.sh sendrecv_probe   # needs .whl/ and .gpurun/nccl-tests carried
#   benchmarks/gpu.sh sendrecv_probe:iter   # ~1 min: nccl-tests' own per-iteration times (-I 1 -J) over 100
#     iterations a size, sendrecv and all_reduce, and ours without a per-size warm-up (one batch, -w 0)
# What comes back: summary.txt, sendrecv_probe.log, sendrecv-runs.tgz.
set -u
LOG="${OUT:-/tmp/gpufabric-out}/sendrecv_probe.log"
source "$(dirname "$0")/gpu_lib.sh"
: > "$LOG"
gpu_python_setup
N=$(timeout 30 nvidia-smi -L | wc -l)
say "host $(hostname) $(date -u +%FT%TZ): $N x $(timeout 30 nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
build_nccl_tests
B=$NT/build
record "nccl-tests build: exit $? ($(ls $B/*_perf 2>/dev/null | wc -l) binaries), $N GPUs"
R="$OUT/runs"; mkdir -p "$R"
SIZES=(-b 1M -e 1G -f 2 -w 5)
MPI=(mpirun --allow-run-as-root --oversubscribe -np "$N" -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE)

# times FILE: "2M oop/ip 4M oop/ip 8M oop/ip" from a printed table (both tools print nccl-tests' columns)
times() {
  awk '$1 == 2097152 || $1 == 4194304 || $1 == 8388608 { if (!seen[$1]++) printf "%s %s/%s  ", $1 / 1048576 "M", $6, $10 }' "$1"
}
nt() {  # nt TAG [mpirun options and env] -- [perf options]
  local tag=$1; shift
  local pre=() ; while [ $# -gt 0 ] && [ "$1" != -- ]; do pre+=("$1"); shift; done; shift
  timeout 60 "${MPI[@]}" "${pre[@]}" "$B/sendrecv_perf" "${SIZES[@]}" -c 0 -g 1 "$@" >"$R/$tag.txt" 2>&1
  record "nccl-tests $tag: exit $?, $(times "$R/$tag.txt")"
}
ours() {  # ours TAG [VAR=value ...] -- [bench options]
  local tag=$1; shift
  local vars=() ; while [ $# -gt 0 ] && [ "$1" != -- ]; do vars+=("$1"); shift; done; shift
  timeout 90 env "${vars[@]}" $GF bench -c sendrecv "${SIZES[@]}" --no-check --no-progress --run-dir "$R/$tag" "$@" \
    >"$R/$tag.txt" 2>&1
  record "gpufabric $tag: exit $?, $(times "$R/$tag.txt")"
}

if [ "${1:-}" = iter ]; then
  # Does an iteration's time change along a batch? nccl-tests' -I 1 per-iteration CUDA-event times, every
  # process's, in its JSON (-J); all_reduce beside sendrecv as the collective that agrees.
  for c in sendrecv all_reduce; do
    for round in 1 2; do
      timeout 60 "${MPI[@]}" "$B/${c}_perf" -b 1M -e 16M -f 2 -w 5 -n 100 -c 0 -g 1 -I 1 -J "$R/nt-iter-$c-$round.json" \
        >"$R/nt-iter-$c-$round.txt" 2>&1
      record "nccl-tests $c -n 100 -I 1 run $round: exit $?, $(times "$R/nt-iter-$c-$round.txt")"
    done
  done
  for round in 1 2; do
    nt "nt-$round" -- -n 20
    ours "o-nowarm-$round" -- -n 20 --batches 1 -w 0
    ours "o-$round" -- -n 20
  done
  python3 - "$R" >>"$LOG" 2>&1 <<'PY'
import json, pathlib, statistics, sys
# Each size's per-iteration times (max over processes) in windows of 20: does the batch slow down?
for path in sorted(pathlib.Path(sys.argv[1]).glob("nt-iter-*.json")):
    try:
        data = json.loads(path.read_text())
    except ValueError as exc:
        print(path.name, "unreadable:", exc); continue
    print(path.name, json.dumps(data)[:600])
PY
  tar -czf "$OUT/sendrecv-runs.tgz" -C "$OUT" runs 2>/dev/null && rm -rf "$R"
  print_summary
  exit 0
fi

for round in 1 2; do
  nt "nt-$round" -- -n 20
  ours "o-$round" -- -n 20
  nt "nt-info-$round" -x NCCL_DEBUG=INFO -x NCCL_DEBUG_SUBSYS=INIT,NET,ENV -x NCCL_DEBUG_FILE="$R/nt-info-$round.%h.%p.log" -- -n 20
  ours "o-warn-$round" NCCL_DEBUG=WARN -- -n 20
  nt "nt-nobind-$round" --bind-to none -- -n 20
  ours "o-share-$round" GPUFABRIC_CPU_BIND=share -- -n 20
  ours "o-nowatch-$round" GPUFABRIC_GPU_SHARING=off -- -n 20
  ours "o-onebatch-$round" -- -n 20 --batches 1
done
ours "o-pyloop" GPUFABRIC_LAUNCH_LOOP=python -- -n 20
nt "nt-n200" -- -n 200
ours "o-n200" -- -n 200 --batches 1
# What NCCL chose for the 4 MB sendrecv in each tool: channels per peer, chunk sizes, protocols.
DBG=(NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,P2P,TUNING,ENV)
timeout 60 "${MPI[@]}" -x NCCL_DEBUG=INFO -x NCCL_DEBUG_SUBSYS=INIT,P2P,TUNING,ENV -x NCCL_DEBUG_FILE="$R/nt-dbg.%h.%p.log" \
  "$B/sendrecv_perf" -b 4M -e 4M -n 20 -w 5 -c 0 -g 1 >"$R/nt-dbg.txt" 2>&1
record "nccl-tests 4 MB with P2P,TUNING log: exit $?, $(cat "$R"/nt-dbg.*.log 2>/dev/null | wc -l) lines"
timeout 60 env "${DBG[@]}" $GF bench -c sendrecv -b 4M -e 4M -n 20 -w 5 --no-check --no-progress --run-dir "$R/o-dbg" \
  >"$R/o-dbg.txt" 2>&1
record "gpufabric 4 MB with P2P,TUNING log: exit $?"
for f in "$R"/nt-dbg.*.log "$R"/o-dbg/nccl/*.log; do
  [ -f "$f" ] || continue
  echo "== $f" >>"$LOG"
  grep -E 'P2P|p2p|Channel|chunk|nChannels|TUNING|NCCL_' "$f" | sed 's/^[^ ]* [^ ]* //' | sort | uniq -c | sort -rn | head -40 >>"$LOG"
done
tar -czf "$OUT/sendrecv-runs.tgz" -C "$OUT" runs 2>/dev/null && rm -rf "$R"
print_summary
