#!/usr/bin/env bash
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
if ls .whl/*.whl >/dev/null 2>&1; then python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl; fi
export PYTHONPATH=/tmp/site:$PWD/src
# train-bench on the lent GPU machine (2-4 H200, one host): gpu-marked tests, then the numbers that go into
# docs/benchmarks.md (section docs/benchmarks-train.md): fabric on/off speed-up of a GPT-2-small-sized
# model (medium, ~136M parameters, 272 MB of bf16 gradients per step) with DDP and FSDP, and the busbw
# prediction of the communication time (probe, and a gpufabric bench all_reduce sweep via --busbw-from).
# Run from the repository root. Every step is under `timeout`; the whole script takes < 4 minutes on
# 4x H200. Results under $OUT; the short summary is printed LAST.
#
#   benchmarks/train/gpu_train.sh           # tests + measurements
#   benchmarks/train/gpu_train.sh measure   # measurements only (~2.5 min)
set -u
PART="${1:-all}"
OUT="${OUT:-/tmp/gpufabric-train-out}"
mkdir -p "$OUT/runs"
LOG="$OUT/gpu_train.log"
: > "$LOG"
note() { echo "== $*" | tee -a "$LOG"; }
GF=(python3 -m gpufabric.cli)
STEPS="${STEPS:-20}"
BATCH="${BATCH:-8}"
MODEL="${MODEL:-medium}"

note "host $(hostname) $(date -u +%FT%TZ) part=$PART"
timeout 30 nvidia-smi -L >>"$LOG" 2>&1
timeout 60 python3 -c "import torch, pydantic; print('torch', torch.__version__, 'nccl', torch.cuda.nccl.version(), \
'gpus', torch.cuda.device_count())" 2>&1 | tee -a "$LOG"

if [ "$PART" = "all" ]; then
  note "pytest -m gpu tests/train"
  if python3 -c "import pytest" 2>/dev/null; then
    timeout 120 python3 -m pytest -m gpu tests/train -q -p no:cacheprovider -o addopts="" -x \
      >"$OUT/pytest-train.log" 2>&1
    echo "pytest exit $?" | tee -a "$LOG"; tail -3 "$OUT/pytest-train.log" | tee -a "$LOG"
  else
    note "pytest is not installed here: carry its wheels (pytest, pluggy, iniconfig, packaging) in .whl/"
  fi
fi

note "bench all_reduce 1M..1G bf16 (the busbw table for --busbw-from)"
timeout 60 "${GF[@]}" bench -c all_reduce -b 1M -e 1G -f 4 -d bfloat16 -n 10 --batches 3 \
  --run-dir "$OUT/runs/bench" --out "$OUT/bench.json" >"$OUT/runs/bench.txt" 2>>"$LOG"
echo "bench exit $?" | tee -a "$LOG"

train() {  # name, timeout, flags...
  local name="$1" limit="$2"; shift 2
  note "train-bench $name: $*"
  timeout "$limit" "${GF[@]}" train-bench --model "$MODEL" --batch-size "$BATCH" --steps "$STEPS" \
    --run-dir "$OUT/runs/$name" --out "$OUT/$name.json" --format markdown --timeout $((limit - 5)) "$@" \
    >"$OUT/$name.md" 2>>"$LOG"
  echo "$name exit $?" | tee -a "$LOG"
}
train ddp-ab 80 --ab
if [ -s "$OUT/bench.json" ]; then train ddp-busbw 40 --no-scaling --busbw-from "$OUT/bench.json"; fi
train fsdp-ab 80 --ab --strategy fsdp --no-scaling

tar czf "$OUT/runs.tgz" -C "$OUT" runs 2>/dev/null && rm -rf "$OUT/runs"
{
  echo "# train-bench on $(hostname): $(timeout 20 nvidia-smi -L 2>/dev/null | wc -l) GPU(s), $(date -u +%F)"
  for name in ddp-ab ddp-busbw fsdp-ab; do
    [ -s "$OUT/$name.md" ] && { echo; echo "## $name"; echo; cat "$OUT/$name.md"; }
  done
} > "$OUT/summary.md"
echo; echo "== summary (details: summary.md, *.json, runs.tgz, gpu_train.log)"
cat "$OUT/summary.md"
