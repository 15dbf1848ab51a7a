#!/usr/bin/env bash
# Issue 41 on a 4-GPU machine (nvidia-h100-x4): NCCL's own diagnostics read by gpufabric, with every raw
# capture kept for CPU-test fixtures. Three phases, each one call under 10 minutes on the same warm
# machine (the builds under .gpurun/ are kept between calls):
#   benchmarks/gpu.sh nccl_native:build   # NCCL 2.31 from .gpurun/nccl (sm_90 only), its Inspector plugin,
#                                         # nccl-tests against torch's NCCL 2.28.9 (~6-8 min)
#   benchmarks/gpu.sh nccl_native:ras     # RAS of a 4-rank nccl-tests job, clean and with one rank stopped
#                                         # (SIGSTOP), on 2.28.9 and 2.31: our client and raw socket dumps
#   benchmarks/gpu.sh nccl_native:rest    # Inspector (JSON, Prometheus), NCCL_RUN_DIAGNOSTICS (and with
#                                         # NCCL_P2P_DISABLE=1), bench on 2.31, bench --ab 2.28.9 vs 2.31
# Needs carried: .whl/ (our wheels), .gpurun/nccl-tests, .gpurun/nccl (NCCL v2.31.2-1 source:
# `git archive --prefix=nccl/ v2.31.2-1 | tar x -C .gpurun`). What comes back: summary.txt,
# nccl_native-<phase>.log, captures/ (every raw RAS byte stream, DIAG stdout, Inspector dump), runs.tgz.
set -u
PHASE="${1:-all}"
LOG="${OUT:-/tmp/gpufabric-out}/nccl_native-$PHASE.log"
source "$(dirname "$0")/gpu_lib.sh"
: > "$LOG"
C="$OUT/captures"; R="$OUT/runs"; mkdir -p "$C" "$R"
N231=.gpurun/nccl/build/lib
INSPECTOR_DIR=.gpurun/nccl/plugins/profiler/inspector
B=$NT/build
gpu_python_setup
TORCH_NCCL_LIB="$NCCL_DIR/lib/libnccl.so.2"
say "host $(hostname) $(date -u +%FT%TZ) phase $PHASE: $(nvidia-smi --query-gpu=name --format=csv,noheader | sort | uniq -c | tr -s ' ')"

phase_build() {
  t0=$(now)
  ( cd .gpurun/nccl && timeout 420 make -j16 src.build NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" ) \
    >"$OUT/nccl-build.log" 2>&1
  record "NCCL build: exit $? wall $(since "$t0") s | $(ls $N231/libnccl.so.* 2>/dev/null | head -1)"
  ( cd $INSPECTOR_DIR && timeout 120 make -j16 CUDA_HOME=/usr/local/cuda ) >"$OUT/inspector-build.log" 2>&1
  record "Inspector build: exit $? | $(find $INSPECTOR_DIR -name 'libnccl-profiler-inspector.so' | head -1)"
  build_nccl_tests
  record "nccl-tests build: exit $? ($(ls $B/*_perf 2>/dev/null | wc -l) binaries)"
}

# shellcheck source=benchmarks/nccl_native_lib.sh
source "$(dirname "$0")/nccl_native_lib.sh"
phase_ras() {
  [ -x "$B/all_reduce_perf" ] || { record "ras: no nccl-tests build; run the build phase first"; return; }
  ras_one nccl2289 "$NCCL_DIR/lib"
  if [ -f "$N231/libnccl.so.2" ]; then ras_one nccl231 "$N231"; else record "ras: no NCCL 2.31 build"; fi
}

# inspector PLUGIN LIBDIR VERSION: the Inspector's JSON and Prometheus dumps of a short job on the NCCL in
# LIBDIR, then what `show` and `doctor` read of them.
inspector() {
  local plugin=$1 libdir=$2 version=$3
  NCCL_PROFILER_PLUGIN=$plugin NCCL_INSPECTOR_ENABLE=1 NCCL_INSPECTOR_DUMP_DIR="$C/inspector-json" \
    NCCL_INSPECTOR_DUMP_THREAD_INTERVAL_MICROSECONDS=500 mpi4 120 "$libdir" -b 1M -e 64M -f 4 -n 20 >"$C/inspector-json-job.txt" 2>&1
  record "Inspector JSON job ($version): exit $? | $(find "$C/inspector-json" -type f | wc -l) file(s)"
  NCCL_PROFILER_PLUGIN=$plugin NCCL_INSPECTOR_ENABLE=1 NCCL_INSPECTOR_DUMP_DIR="$C/inspector-prom" NCCL_INSPECTOR_PROM_DUMP=1 \
    mpi4 120 "$libdir" -b 1M -e 64M -f 4 -n 20 >"$C/inspector-prom-job.txt" 2>&1
  record "Inspector Prometheus job ($version): exit $? | $(find "$C/inspector-prom" -type f | wc -l) file(s)"
  timeout 60 $GF show "$C/inspector-json" >"$R/show-inspector.txt" 2>&1
  record "show inspector-json: exit $? | $(head -3 "$R/show-inspector.txt" | tr '\n' ' ' | cut -c1-160)"
  timeout 60 $GF doctor "$C/inspector-json" "$C/inspector-prom" >"$R/doctor-inspector.txt" 2>&1
  record "doctor inspector: exit $? | $(grep -m2 inspector "$R/doctor-inspector.txt" | tr -s ' ' | cut -c1-160 | tr '\n' ' ')"
}

phase_rest() {
  local plugin; plugin=$(find "$PWD/$INSPECTOR_DIR" -name 'libnccl-profiler-inspector.so' | head -1)
  if [ -n "$plugin" ] && [ -f "$N231/libnccl.so.2" ]; then
    inspector "$plugin" "$N231" 2.31
  else
    record "Inspector: plugin or NCCL 2.31 build missing; run the build phase first"
  fi
  if [ -f "$N231/libnccl.so.2" ]; then
    NCCL_RUN_DIAGNOSTICS=1 NCCL_RUN_RAS_DIAGNOSTICS=1 mpi4 120 "$N231" -b 8 -e 1M -f 32 -n 5 >"$C/diag-nccl231.txt" 2>&1
    record "NCCL_RUN_DIAGNOSTICS 2.31: exit $? | $(grep 'NCCL DIAG' "$C/diag-nccl231.txt" | grep -m2 'p2p\|completed' | cut -c1-140 | tr '\n' ' ')"
    NCCL_RUN_DIAGNOSTICS=1 NCCL_RUN_RAS_DIAGNOSTICS=1 NCCL_P2P_DISABLE=1 mpi4 120 "$N231" -b 8 -e 1M -f 32 -n 5 >"$C/diag-nccl231-p2p-disabled.txt" 2>&1
    record "diagnostics, NCCL_P2P_DISABLE=1: exit $? | $(grep -c 'NCCL DIAG' "$C/diag-nccl231-p2p-disabled.txt") DIAG lines, p2p: $(grep 'NCCL DIAG' "$C/diag-nccl231-p2p-disabled.txt" | grep -m1 p2p | cut -c1-120)"
    GPUFABRIC_NCCL_LIB="$PWD/$N231/libnccl.so.2" timeout 150 $GF bench --ranks 4 -b 8 -e 64M -f 8 -n 10 --no-check --run-dir "$R/bench-nccl231" >"$R/bench-nccl231.txt" 2>&1
    record "bench on 2.31: exit $? | $(wc -l <"$R/bench-nccl231/nccl/nccl-diag.log" 2>/dev/null || echo no) diag lines kept | $(grep -m1 'init diagnostics' "$R/bench-nccl231.txt" | cut -c1-120)"
    cp "$R/bench-nccl231/nccl/nccl-diag.log" "$C/bench-nccl231-diag.log" 2>/dev/null
    timeout 60 $GF doctor "$R/bench-nccl231" >"$R/doctor-bench-nccl231.txt" 2>&1
    record "doctor bench 2.31: exit $? | $(grep -m1 nccl-diagnostics "$R/doctor-bench-nccl231.txt" | tr -s ' ' | cut -c1-160)"
    t0=$(now)
    timeout 330 $GF bench --ab --ab-a "GPUFABRIC_NCCL_LIB=$TORCH_NCCL_LIB" --ab-b "GPUFABRIC_NCCL_LIB=$PWD/$N231/libnccl.so.2" \
      --ranks 4 -b 8 -e 256M -f 4 -n 20 --no-check --rounds 2 --format json --run-dir "$R/ab-nccl" >"$R/ab-nccl.json" 2>"$R/ab-nccl.err"
    record "bench --ab 2.28.9 vs 2.31: exit $? wall $(since "$t0") s | $(python3 -c "import json,sys; print(' | '.join(json.load(open(sys.argv[1]))['verdict']))" "$R/ab-nccl.json" 2>&1 | cut -c1-240)"
  else
    record "diagnostics and A/B: no NCCL 2.31 build; run the build phase first"
  fi
}

# lite: what needs no NCCL 2.31 (whose source this project could not reach: the NVIDIA/nccl mirror here
# ends at v2.30.7, and the 252 MB wheel is too large to carry): nccl-tests and the Inspector plugin of
# v2.28.9-1 (.gpurun/nccl228, `git archive --prefix=nccl228/ v2.28.9-1 | tar x -C .gpurun`) built against
# torch's NCCL 2.28.9, RAS of a 4-rank job on it (clean, one rank stopped, dead), the Inspector's dumps.
phase_lite() {
  local dir=.gpurun/nccl228/ext-profiler/inspector plugin
  build_nccl_tests
  record "nccl-tests build: exit $? ($(ls $B/*_perf 2>/dev/null | wc -l) binaries)"
  ( cd $dir && timeout 120 make -j16 CUDA_HOME=/usr/local/cuda NCCL_HOME=/tmp/ncclhome ) >"$OUT/inspector-build.log" 2>&1
  plugin=$(find "$PWD/$dir" -name 'libnccl-profiler-inspector.so' | head -1)
  record "Inspector build (v2.28.9-1): exit $? | ${plugin:-none}"
  ras_one nccl2289 "$NCCL_DIR/lib"
  if [ -n "$plugin" ]; then
    inspector "$plugin" "$NCCL_DIR/lib" 2.28.9
  fi
}

case "$PHASE" in
  lite) phase_lite ;;
  build) phase_build ;;
  ras) phase_ras ;;
  rest) phase_rest ;;
  all) phase_build; phase_ras; phase_rest ;;
  *) record "unknown phase $PHASE: lite, build, ras, rest or all" ;;
esac
tar -czf "$OUT/runs-$PHASE.tgz" -C "$OUT" runs 2>/dev/null && rm -rf "$R"
print_summary
