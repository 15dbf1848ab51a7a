#!/usr/bin/env bash
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
if ls .whl/*.whl >/dev/null 2>&1; then python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl; fi
export PYTHONPATH=/tmp/site:$PWD/src
# Fabric A/B and socket tuning on one GPU host (issue 5 parts 4-5), for the lent 4x H200.
#   run from the repository root:  bash benchmarks/ab_tune/gpu_ab_tune.sh     (results under $OUT)
# Steps (each under `timeout`, total < 5 minutes):
#   1. gpufabric bench --ab: all_reduce 8 B - 256 MB, fabric on (NVLink) vs off (P2P+SHM disabled ->
#      NET/Socket), 2 ABBA rounds = 4 jobs, samples pooled; each side attested from its NCCL logs.
#   2. gpufabric tune: NCCL_SOCKET_NTHREADS x NCCL_NSOCKS_PERTHREAD (+ channels) on the socket path at
#      256 MB, successive halving within 14 jobs.
# Output: $OUT/ab.json, $OUT/ab.md, $OUT/tune.json, $OUT/tune.md, $OUT/ab_tune_runs.tgz (every job's
# result JSON + NCCL logs); a summary printed last.
OUT=${OUT:-/tmp/gpufabric-ab-tune}
mkdir -p "$OUT"
RUNS=$OUT/runs
nvidia-smi -L | tee "$OUT/gpus.txt"

echo "== 1/2 bench --ab" >&2
timeout 120 python3 -m gpufabric.cli bench --ab --rounds 2 -c all_reduce -b 8 -e 256M -f 4 -n 5 -w 2 \
  --batches 3 --format markdown --out "$OUT/ab.json" --run-dir "$RUNS/ab" --timeout 60 >"$OUT/ab.md" \
  2>"$OUT/ab.stderr"
echo "bench --ab exit code: $?" | tee -a "$OUT/ab.stderr"
cat "$OUT/ab.md"

echo "== 2/2 tune" >&2
timeout 160 python3 -m gpufabric.cli tune --size 256M --budget 14 -n 5 -w 2 --batches 3 --timeout 60 \
  --format markdown --out "$OUT/tune.json" --run-dir "$RUNS/tune" >"$OUT/tune.md" 2>"$OUT/tune.stderr"
echo "tune exit code: $?" | tee -a "$OUT/tune.stderr"
cat "$OUT/tune.md"

tar czf "$OUT/ab_tune_runs.tgz" -C "$OUT" runs && rm -rf "$RUNS"

echo "================ SUMMARY (ab_tune) ================"
timeout 30 python3 - "$OUT" <<'PY'
import json, sys
from pathlib import Path

out = Path(sys.argv[1])
try:
    ab = json.loads((out / "ab.json").read_text())
    table = ab["comparison"]["tables"][0]
    row = next((r for r in table["rows"] if r["size_bytes"] == 256 << 20), table["rows"][-1])
    on, off = row["busbw"]
    print(f"A/B all_reduce at {row['size_bytes'] >> 20} MB: on {on:.2f} GB/s, off {off:.2f} GB/s, "
          f"speed-up {on / off:.1f}x" if off else "A/B: off side busbw 0")
    for line in ab["verdict"]:
        print(f"A/B verdict: {line}")
    for side in ab["sides"]:
        print(f"A/B proof {side['side']}: {side['proof']['verdict'].upper()} - {side['proof']['cause']}")
except Exception as exc:  # print what is there, whatever failed
    print(f"A/B: no result ({type(exc).__name__}: {exc}); see ab.stderr")
try:
    tune = json.loads((out / "tune.json").read_text())
    best, default = tune["best"], tune["default"] or {}
    export = " ".join(f"{k}={v}" for k, v in sorted(tune["recommended"].items())) or "(keep defaults)"
    interval = tune.get("gain_interval") or {}
    spread = f" [95% {interval['low']:.2f}-{interval['high']:.2f}]" if interval else ""
    print(f"tune at {tune['size_bytes'] >> 20} MB: default {default.get('busbw_gbs', 0):.2f} GB/s -> "
          f"best {best['name']} {best['busbw_gbs']:.2f} GB/s, gain {tune['gain'] or 0:.2f}x{spread} "
          f"({tune['jobs']} jobs)")
    print(f"tune best env: export {export}")
    print(f"tune verdict: {tune['verdict']}")
except Exception as exc:
    print(f"tune: no result ({type(exc).__name__}: {exc}); see tune.stderr")
PY
