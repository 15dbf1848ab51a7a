#!/usr/bin/env bash
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
if ls .whl/*.whl >/dev/null 2>&1; then python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl; fi
export PYTHONPATH=/tmp/site:$PWD/src
# `gpufabric isolate` on real GPUs (issue 8 part 3), for the lent 4x H200. Run from the repository root:
#   bash benchmarks/scale/gpu_isolate.sh            (results under $OUT; each round is a fresh 4-process job, ~15-20 s: total < 6 minutes)
# Steps, each under `timeout`:
#   1. pytest -m gpu tests/analysis/isolate/test_real_isolate.py: 4 ranks (one per GPU), rank 2 delayed 5 ms a call
#      by GPUFABRIC_FAULT (a 64 MB alltoall pair takes ~0.14 ms on 4x H200); the search must convict node0002 and accuse nobody else.
#   2. gpufabric isolate --nodes 4 --ranks 4 with GPUFABRIC_FAULT=slow:rank=2:delay_ms=5: the table, and
#      every round's per-group busbw (each round = one job, each group an NCCL sub-communicator).
# Output: $OUT/pytest-isolate.log, $OUT/isolate.txt, $OUT/isolate.json, $OUT/isolate_runs.tgz (round
# configs, round results, NCCL logs); a summary printed last.
set -u
OUT=${OUT:-/tmp/gpufabric-isolate}
mkdir -p "$OUT"
RUNS=$OUT/runs
LOG=$OUT/gpu_isolate.log
: >"$LOG"
note() { echo "== $*" | tee -a "$LOG"; }
timeout 20 nvidia-smi -L 2>&1 | tee -a "$LOG"

note "1/2 pytest -m gpu (4 ranks, rank 2 slowed)"
if python3 -c "import pytest" 2>/dev/null; then
  timeout 170 python3 -m pytest -m gpu tests/analysis/isolate/test_real_isolate.py -q -s -p no:cacheprovider \
    -o addopts="" >"$OUT/pytest-isolate.log" 2>&1
  echo "pytest exit $?" | tee -a "$LOG"; tail -3 "$OUT/pytest-isolate.log" | tee -a "$LOG"
else
  note "pytest is not installed here: carry its wheels (pytest, pluggy, iniconfig, packaging) in .whl/"
fi

note "2/2 gpufabric isolate --nodes 4 --ranks 4, GPUFABRIC_FAULT=slow:rank=2:delay_ms=5"
GPUFABRIC_FAULT=slow:rank=2:delay_ms=5 timeout 170 python3 -m gpufabric.cli isolate --nodes 4 --ranks 4 \
  --round-timeout 45 --run-dir "$RUNS/isolate" >"$OUT/isolate.txt" 2>"$OUT/isolate.stderr"
echo "isolate exit $?" | tee -a "$LOG"
cp "$RUNS/isolate/isolate.json" "$OUT/isolate.json" 2>/dev/null
cat "$OUT/isolate.txt"
tar czf "$OUT/isolate_runs.tgz" -C "$OUT" runs 2>/dev/null && rm -rf "$RUNS"

echo "================ SUMMARY (gpu_isolate) ================"
grep -A3 "^pytest exit" "$LOG"
timeout 20 python3 - "$OUT" <<'PY'
import json, sys, tarfile
from pathlib import Path

out = Path(sys.argv[1])
try:
    data = json.loads((out / "isolate.json").read_text())
    report = data["report"]
    print(f"isolate: {data['collective']} {data['size_bytes'] >> 20} MB per group, {data['backend']}, "
          f"{data['world_size']} ranks, fault {data['fault']}, link sweep {data['link_sweep']}")
    print(f"expected busbw: {data['expected_gbps']} GB/s ({data['expected_source']})")
    found = [(s["kind"], s["verdict"], "-".join(s["nodes"])) for s in report["suspects"]]
    ok = found == [("node", "convicted", "node0002")]
    print(f"suspects: {found} -> {'PASS: rank 2 named, nobody else' if ok else 'FAIL: expected node0002 only'}")
    print("rounds: " + " ".join(f"{r['round']}:{'+'.join(r['purposes'])}({r['groups']}/{r['short']})"
                                for r in report["round_log"]))
    with tarfile.open(out / "isolate_runs.tgz") as tar:
        for member in sorted(m.name for m in tar.getmembers() if m.name.endswith("/round.json")):
            result = json.load(tar.extractfile(member))
            groups = ", ".join(f"{g['ranks']} {g['busbw_gbps']:.3g} GB/s" for g in result["groups"])
            print(f"  round {result['round']}: {groups}")
except Exception as exc:  # print what is there, whatever failed
    print(f"isolate: no result ({type(exc).__name__}: {exc}); stderr: {(out / 'isolate.stderr').read_text()[-400:]}")
PY
