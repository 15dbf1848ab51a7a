#!/usr/bin/env bash
# The engine's anchor session: gpu-marked bench tests, then every measurement against the nccl-tests anchors.
# Made for 4x H200. `measure` as a whole is bounded by MEASURE_BUDGET_S (default 330 s, so one device call
# stays near 6 minutes): a step starts only with time left and never runs past the budget.
#   benchmarks/gpu.sh anchors:tests      # pytest -m gpu tests/bench + `gpufabric bench` with no arguments (~5 min)
#   benchmarks/gpu.sh anchors:measure    # every anchor measurement (~4-6 min)
#   benchmarks/gpu.sh anchors:all        # both (~10 min: more than one 10-minute device call may allow)
#   STEPS=allreduce,latency benchmarks/gpu.sh anchors:measure   # a subset of measure_anchors steps
# Parts run as separate device calls return separate anchors.json files; compare_anchors.py merges them.
# What comes back: session-PART.log, session-PART.tgz, anchors.json, comparison.md. (Was gpu_session.sh PART.)
PART="${1:-all}"
LOG="$OUT/session-$PART.log"
: > "$LOG"
SESSION_START=$SECONDS

note() { echo "== $*" | tee -a "$LOG"; }

note "host $(hostname) $(date -u +%FT%TZ) part=$PART"
timeout 30 nvidia-smi -L >>"$LOG" 2>&1
timeout 60 python3 -c "import torch, pydantic; print('torch', torch.__version__, 'cuda', torch.version.cuda, \
'nccl', torch.cuda.nccl.version(), 'gpus', torch.cuda.device_count(), 'pydantic', pydantic.VERSION)" 2>&1 | tee -a "$LOG"
# Other tenants on a shared host show up here (a level shift between runs may be theirs, not ours).
timeout 30 nvidia-smi --query-gpu=index,utilization.gpu,memory.used,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
  --format=csv >>"$LOG" 2>&1

run_tests() {
  note "pytest -m gpu"
  if python3 -c "import pytest" 2>/dev/null; then
    timeout 420 python3 -m pytest -m gpu tests/bench -q -p no:cacheprovider -o addopts="-ra" \
      --junitxml="$OUT/pytest-gpu.xml" >"$OUT/pytest-gpu.log" 2>&1
    record "pytest -m gpu tests/bench: exit $? | $(tail -1 "$OUT/pytest-gpu.log")"; tail -5 "$OUT/pytest-gpu.log" >>"$LOG"
  else
    note "pytest is not installed here: carry its wheels (pytest, pluggy, iniconfig, packaging) in .whl/"
  fi
  note "gpufabric bench (no arguments)"
  timeout 180 python3 -m gpufabric.cli bench --run-dir "$OUT/runs/noargs" >"$OUT/bench-noargs.txt" 2>>"$LOG"
  record "bench (no arguments): exit $? | $(grep -c '^ *[0-9]' "$OUT/bench-noargs.txt") rows"; tail -4 "$OUT/bench-noargs.txt" >>"$LOG"
}

# Per-step limits (seconds); the whole of `measure` is capped at MEASURE_BUDGET_S.
step_limit() {
  case "$1" in
    allreduce) echo 90 ;; cumem) echo 150 ;; spread) echo 90 ;; latency) echo 110 ;;
    sweep) echo 120 ;; others) echo 60 ;; socket) echo 100 ;; *) echo 120 ;;
  esac
}

measure() {
  local budget="${MEASURE_BUDGET_S:-330}" start=$SECONDS step left limit
  for step in ${1//,/ }; do
    left=$(( budget - (SECONDS - start) ))
    if [ "$left" -lt 20 ]; then note "skip $step: measure budget ${budget}s spent"; continue; fi
    limit=$(step_limit "$step"); [ "$limit" -gt "$left" ] && limit=$left
    note "measure_anchors $step (limit ${limit}s, ${left}s left)"
    RUN_TIMEOUT_S=$(( limit - 5 )) timeout -k 10 "$limit" \
      python3 benchmarks/measure_anchors.py --out "$OUT" --steps "$step" >>"$LOG" 2>&1
    record "measure $step: exit $? after $(( SECONDS - start )) s"
  done
}

DEFAULT_STEPS="allreduce,cumem,spread,latency,sweep,others,socket"
case "$PART" in
  tests) run_tests ;;
  measure) measure "${STEPS:-$DEFAULT_STEPS}" ;;
  all) run_tests; measure "${STEPS:-$DEFAULT_STEPS}" ;;
  *) echo "Error: unknown part '$PART' of scenario anchors; choose tests, measure or all (benchmarks/gpu.sh anchors:measure)" >&2; exit 2 ;;
esac
timeout 30 nvidia-smi --query-gpu=index,utilization.gpu,memory.used,clocks.sm,temperature.gpu,power.draw \
  --format=csv >>"$LOG" 2>&1
note "session $PART took $(( SECONDS - SESSION_START ))s"

# At most 8 files come back: everything bulky goes into one archive.
timeout 60 tar czf "$OUT/session-$PART.tgz" -C "$OUT" --exclude='*.tgz' . 2>/dev/null
# (The harness's summary.txt and harness.log stay: with one scenario they share this folder.)
find "$OUT" -mindepth 1 -maxdepth 1 ! -name '*.tgz' ! -name 'anchors.json' ! -name "session-$PART.log" \
  ! -name 'pytest-gpu.log' ! -name summary.txt ! -name harness.log -exec rm -rf {} +
if [ -f "$OUT/anchors.json" ]; then
  timeout 60 python3 benchmarks/compare_anchors.py "$OUT/anchors.json" > "$OUT/comparison.md" 2>&1
  say "anchors (details: comparison.md, anchors.json, session-$PART.tgz)"
  timeout 60 python3 benchmarks/compare_anchors.py "$OUT/anchors.json" --summary >"$OUT/anchors-summary.txt" 2>&1
  while IFS= read -r line; do record "$line"; done <"$OUT/anchors-summary.txt"
  rm -f "$OUT/anchors-summary.txt"
fi
