#!/usr/bin/env bash
# Issue 33's isolate target on a 4-GPU machine: a matmul loop on one GPU (heavy: always busy; light: busy
# 50 ms of every 200 ms), 4 one-GPU nodes over NVLink, one clean search and 3 runs of each load
# (tests/analysis/isolate/test_isolate_gpu_load.py prints each run's record as it ends).
#   benchmarks/gpu.sh isolate_load      # nvidia-h100-x4; ~6 min
set -u
LOG="${OUT:-/tmp/gpufabric-out}/isolate-load.log"
source "$(dirname "$0")/gpu_lib.sh"
: > "$LOG"
gpu_python_setup
say "host $(hostname) $(date -u +%FT%TZ): $(timeout 30 nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1) x$(nvidia-smi -L | wc -l)"
t0=$(now)
PYTEST_TIMEOUT=900 timeout 570 python3 -m pytest -m gpu -s -p no:cacheprovider -q \
  tests/analysis/isolate/test_isolate_gpu_load.py ${ISOLATE_K:+-k "$ISOLATE_K"} >"$OUT/pytest-isolate.txt" 2>&1
record "pytest test_isolate_gpu_load: exit $? wall $(since "$t0") s | $(tail -1 "$OUT/pytest-isolate.txt" | cut -c1-160)"
python3 - "$OUT/pytest-isolate.txt" >>"$OUT/summary.txt" 2>&1 <<'P'
import json, re, sys
text = open(sys.argv[1]).read()
dec = json.JSONDecoder()
i = 0
while (i := text.find('{\n "run"', i)) >= 0:
    rec, end = dec.raw_decode(text, i); i = end
    print(f"  {rec.get('run')}: {rec.get('wall_s')} s, {rec.get('rounds')} rounds, {rec.get('group_tests')} groups,",
          [(s[0], s[1], s[2]) for s in rec.get('suspects', [])])
P
print_summary
grep '^  ' "$OUT/summary.txt"
