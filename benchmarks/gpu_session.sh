#!/usr/bin/env bash
# The engine's GPU session: gpu-marked tests, then measurements against the nccl-tests anchors.
# Run from the repository root on the lent GPU machine (4x H200). Every step is bounded by `timeout`, and
# `measure` as a whole by MEASURE_BUDGET_S (default 330 s, so one device call stays near 6 minutes):
# a step starts only with time left and never runs past the budget. Results and logs go under $OUT
# (one archive + the summary), and a short summary table is printed LAST.
#
#   benchmarks/gpu_session.sh tests      # pytest -m gpu + `gpufabric bench` with no arguments (~5 min)
#   benchmarks/gpu_session.sh measure    # every anchor measurement (~4-6 min)
#   benchmarks/gpu_session.sh all        # both (~10 min: more than one 10-minute device call may allow)
#   STEPS=allreduce,latency benchmarks/gpu_session.sh measure   # a subset of measure_anchors steps
# Parts run as separate device calls return separate anchors.json files; compare_anchors.py merges them.
set -u
# Shared-host safety: mandatory, before anything touches a GPU.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1

PART="${1:-all}"
OUT="${OUT:-/tmp/gpufabric-out}"
mkdir -p "$OUT"
LOG="$OUT/session-$PART.log"
: > "$LOG"
SESSION_START=$SECONDS

if ls .whl/*.whl >/dev/null 2>&1; then
  timeout 120 python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl >>"$LOG" 2>&1
fi
export PYTHONPATH="/tmp/site:$PWD/src${PYTHONPATH:+:$PYTHONPATH}"

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
    echo "pytest exit $?" | tee -a "$LOG"; tail -5 "$OUT/pytest-gpu.log" | tee -a "$LOG"
  else
    note "pytest is not installed here: carry its wheels (pytest, pluggy, iniconfig, packaging) in .whl/"
  fi
  note "gpufabric bench (no arguments)"
  timeout 180 python3 -m gpufabric.cli bench --run-dir "$OUT/runs/noargs" >"$OUT/bench-noargs.txt" 2>>"$LOG"
  echo "bench exit $?" | tee -a "$LOG"; tail -4 "$OUT/bench-noargs.txt" | tee -a "$LOG"
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
    echo "measure $step exit $? after $(( SECONDS - start ))s" | tee -a "$LOG"
  done
}

DEFAULT_STEPS="allreduce,cumem,spread,latency,sweep,others,socket"
case "$PART" in
  tests) run_tests ;;
  measure) measure "${STEPS:-$DEFAULT_STEPS}" ;;
  all) run_tests; measure "${STEPS:-$DEFAULT_STEPS}" ;;
  *) echo "unknown part $PART; use tests, measure or all" >&2; exit 2 ;;
esac
timeout 30 nvidia-smi --query-gpu=index,utilization.gpu,memory.used,clocks.sm,temperature.gpu,power.draw \
  --format=csv >>"$LOG" 2>&1
note "session $PART took $(( SECONDS - SESSION_START ))s"

# At most 8 files come back: everything bulky goes into one archive.
timeout 60 tar czf "$OUT/session-$PART.tgz" -C "$OUT" --exclude='*.tgz' . 2>/dev/null
find "$OUT" -mindepth 1 -maxdepth 1 ! -name '*.tgz' ! -name 'anchors.json' ! -name "session-$PART.log" \
  ! -name 'pytest-gpu.log' -exec rm -rf {} +
if [ -f "$OUT/anchors.json" ]; then
  timeout 60 python3 benchmarks/compare_anchors.py "$OUT/anchors.json" > "$OUT/comparison.md" 2>&1
  echo; echo "== summary (details: comparison.md, anchors.json, session-$PART.tgz)"
  timeout 60 python3 benchmarks/compare_anchors.py "$OUT/anchors.json" --summary
fi
