#!/usr/bin/env bash
# NCCL 2.31.2 (carried slim, sm_90) vs torch's 2.28.9 on 4 GPUs: init diagnostics clean and with P2P off, bench --ab with a verdict per size, RAS clean and one rank stopped (~6 min, nvidia-h100-x4)
# One call, issue 41's GPU targets:
#   benchmarks/gpu.sh nccl231            # on nvidia-h100-x4 (4 GPUs), about 6 minutes, under 8
# Needs carried: .whl, .gpurun/nccl-tests, .gpurun/nccl231 (benchmarks/nccl_slim.py's output: the
# nvidia-nccl-cu13 2.31.2 wheel's libnccl.so.2 with every non-sm_90 fatbin payload zeroed, xz'd, and its
# slim.json), .gpurun/nccl228/ext-profiler (NCCL v2.28.9-1's Inspector plugin source). Raw captures for
# the CPU tests' fixtures lie under captures/ (DIAG output, RAS bytes, Inspector dumps); runs-nccl231.tgz
# holds the bench and A/B run directories.
set -u
source "$(dirname "$0")/gpu_lib.sh"
T0=$(now)
# left SECONDS: how much of this scenario's 420 s is left (the harness's set-up and nccl-tests build come
# before it, about 2 minutes): a step that would not fit is skipped with a summary line, not cut by the
# device's 10-minute limit with nothing returned.
left() { python3 -c "print(max(0, int(${NCCL231_BUDGET_S:-420} - ($(now) - $T0))))"; }
fits() { local need=$1 what=$2; [ "$(left)" -ge "$need" ] && return 0; record "skipped, $(left) s left: $what"; return 1; }
C="$OUT/captures"; R="$OUT/runs"; mkdir -p "$C" "$R"
B=$NT/build
gpu_python_setup
# shellcheck source=benchmarks/nccl_native_lib.sh
source "$(dirname "$0")/nccl_native_lib.sh"
N231=/tmp/nccl231/lib
TORCH_NCCL_LIB="$NCCL_DIR/lib/libnccl.so.2"
build_nccl_tests  # under the harness: built once before this scenario starts (against torch's 2.28.9)
record "nccl-tests: $(ls $B/all_reduce_perf 2>/dev/null || echo 'not built')"

# 1. 2.31.2 unpacked and proved the file benchmarks/nccl_slim.py wrote, then loaded by our engine.
mkdir -p "$N231"
timeout 120 python3 -c "
import hashlib, json, lzma, sys
data = lzma.decompress(open('.gpurun/nccl231/lib/libnccl.so.2.xz', 'rb').read())
want = json.load(open('.gpurun/nccl231/slim.json'))['slim_sha256']
open('$N231/libnccl.so.2', 'wb').write(data)
sys.exit(0 if hashlib.sha256(data).hexdigest() == want else 'sha256 differs from slim.json')" >>"$LOG" 2>&1
record "2.31.2 unpacked: exit $? ($(stat -c %s "$N231/libnccl.so.2" 2>/dev/null) bytes)"
ln -sf libnccl.so.2 "$N231/libnccl.so"
GPUFABRIC_NCCL_LIB="$N231/libnccl.so.2" timeout 60 python3 -c "
from gpufabric.engines.nccl import library
print(library.load().describe())" >"$C/load-nccl231.txt" 2>&1
record "2.31.2 loads in our engine: exit $? | $(tail -1 "$C/load-nccl231.txt" | cut -c1-160)"

# 2. Init diagnostics on 2.31.2 over nccl-tests (its DIAG lines are the fixtures): clean (topology dumped),
# all P2P off (NCCL_P2P_DISABLE=1), and one pair's P2P off (topology without the GPU 0 <-> 3 NVLink, P2P
# over NVLink only), each with NCCL's DIAG/INIT log for the per-edge lines.
export NCCL_RUN_DIAGNOSTICS=1 NCCL_RUN_RAS_DIAGNOSTICS=1
NCCL_TOPO_DUMP_FILE="$C/topo-dumped.xml" mpi4 60 "$N231" -b 8 -e 1M -f 32 -n 5 >"$C/diag-nccl231.txt" 2>&1
record "diagnostics 2.31.2 clean: exit $? | $(grep 'NCCL DIAG' "$C/diag-nccl231.txt" | grep -m2 'p2p\|completed' | cut -c1-140 | tr '\n' ' ')"
# INFO with ENV: NCCL's "NCCL_P2P_DISABLE set by environment to 1." line is the evidence of why no pair was checked
NCCL_P2P_DISABLE=1 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV mpi4 60 "$N231" -b 8 -e 1M -f 32 -n 5 >"$C/diag-nccl231-p2p-disabled.txt" 2>&1
record "diagnostics, NCCL_P2P_DISABLE=1: exit $? | $(grep -c 'NCCL DIAG' "$C/diag-nccl231-p2p-disabled.txt") DIAG lines | $(grep 'NCCL DIAG' "$C/diag-nccl231-p2p-disabled.txt" | grep -m1 'p2p' | cut -c1-120)"
python3 benchmarks/topo_drop_pair.py "$C/topo-dumped.xml" "$C/topo-no-0-3.xml" 0 3 >>"$LOG" 2>&1
NCCL_TOPO_FILE="$C/topo-no-0-3.xml" NCCL_P2P_LEVEL=NVL NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,DIAG \
  mpi4 60 "$N231" -b 8 -e 1M -f 32 -n 5 >"$C/diag-nccl231-pair-0-3.txt" 2>&1
record "diagnostics, GPU 0<->3 without NVLink (NCCL_TOPO_FILE, P2P_LEVEL=NVL): exit $? | $(grep 'NCCL DIAG' "$C/diag-nccl231-pair-0-3.txt" | grep -m1 'p2p' | cut -c1-120) | 0->3 via: $(grep -m1 -o '0\[0\] -> 3\[3\] via [^ ]*' "$C/diag-nccl231-pair-0-3.txt")"
unset NCCL_RUN_DIAGNOSTICS NCCL_RUN_RAS_DIAGNOSTICS

# 3. bench on 2.31.2 (diagnostics on by itself) and doctor on it.
GPUFABRIC_NCCL_LIB="$N231/libnccl.so.2" timeout 90 $GF bench --ranks 4 -b 8 -e 64M -f 8 -n 10 --no-check --run-dir "$R/bench-nccl231" >"$R/bench-nccl231.txt" 2>&1
record "bench on 2.31.2: exit $? | $(wc -l <"$R/bench-nccl231/nccl/nccl-diag.log" 2>/dev/null || echo no) diag lines kept | $(grep -m1 'diagnostics' "$R/bench-nccl231.txt" | cut -c1-120)"
cp "$R/bench-nccl231/nccl/nccl-diag.log" "$C/bench-nccl231-diag.log" 2>/dev/null
timeout 60 $GF doctor "$R/bench-nccl231" >"$R/doctor-bench-nccl231.txt" 2>&1
record "doctor bench 2.31.2: exit $? | $(grep -m1 nccl-diagnostics "$R/doctor-bench-nccl231.txt" | tr -s ' ' | cut -c1-160)"

# 4. RAS on 2.28.9: a clean 4-GPU job, then one rank stopped (named within 10 s), handed to isolate.
fits 100 "RAS on 2.28.9" && RAS_DEAD_WAIT=0 ras_one nccl2289 "$NCCL_DIR/lib"

# 5. The upgrade canary: bench --ab of 2.28.9 (A) vs 2.31.2 (B), a verdict at every size.
if fits 120 "bench --ab 2.28.9 vs 2.31.2"; then
  t0=$(now); limit=$(left); limit=$(( limit - 30 < 200 ? limit - 30 : 200 ))
  timeout "$limit" $GF bench --ab --ab-a "GPUFABRIC_NCCL_LIB=$TORCH_NCCL_LIB" --ab-b "GPUFABRIC_NCCL_LIB=$N231/libnccl.so.2" \
    --ab-names nccl-2.28.9,nccl-2.31.2 --ranks 4 -b 8 -e 256M -f 4 -n 20 --no-check --rounds 2 --format json \
    --run-dir "$R/ab-nccl" >"$R/ab-nccl.json" 2>"$R/ab-nccl.err"
  record "bench --ab 2.28.9 vs 2.31.2: exit $? wall $(since "$t0") s (limit $limit s) | $(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(' | '.join(d['verdict'])); print('sizes judged:', len(d['equivalence']['sizes']) if d.get('equivalence') else 'none')" "$R/ab-nccl.json" 2>&1 | tr '\n' ' ' | cut -c1-300)"
  timeout 60 $GF report "$R/ab-nccl" --out "$R/ab-nccl-report.html" >"$R/ab-nccl-report.txt" 2>&1
  record "report of the A/B: exit $? | $(grep -o -m1 'A/B of two configurations: [^<]*' "$R/ab-nccl-report.html")"
fi

# 6. The Inspector's dumps of a short job on 2.28.9 (its plugin built against 2.28.9's headers).
if fits 45 "Inspector on 2.28.9"; then
  dir=.gpurun/nccl228/ext-profiler/inspector
  ( cd $dir && timeout 90 make -j16 CUDA_HOME=/usr/local/cuda NCCL_HOME=/tmp/ncclhome ) >"$C/inspector-build.log" 2>&1
  plugin=$(find "$PWD/$dir" -name 'libnccl-profiler-inspector.so' | head -1)
  record "Inspector build (v2.28.9-1): ${plugin:-none}"
  [ -n "$plugin" ] && NCCL_PROFILER_PLUGIN=$plugin NCCL_INSPECTOR_ENABLE=1 NCCL_INSPECTOR_DUMP_DIR="$C/inspector-json" \
    NCCL_INSPECTOR_DUMP_THREAD_INTERVAL_MICROSECONDS=500 mpi4 60 "$NCCL_DIR/lib" -b 1M -e 64M -f 4 -n 20 >"$C/inspector-json-job.txt" 2>&1
  record "Inspector JSON job (2.28.9): exit $? | $(find "$C/inspector-json" -type f 2>/dev/null | wc -l) file(s)"
  timeout 60 $GF doctor "$C/inspector-json" >"$R/doctor-inspector.txt" 2>&1
  record "doctor inspector: exit $? | $(grep -m1 inspector "$R/doctor-inspector.txt" | tr -s ' ' | cut -c1-160)"
fi
# The device returns at most 8 files: captures and run directories travel as two archives.
tar -czf "$OUT/runs-nccl231.tgz" -C "$OUT" runs 2>/dev/null && rm -rf "$R"
tar -czf "$OUT/captures-nccl231.tgz" -C "$OUT" captures 2>/dev/null && rm -rf "$C"
print_summary
