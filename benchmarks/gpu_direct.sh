#!/usr/bin/env bash
# The direct NCCL engine on a lent GPU machine, side by side with nccl-tests built there.
#   benchmarks/gpu_direct.sh smoke   # ~4 min: install, 1 rank, 2 virtual nodes, every collective --check
#   benchmarks/gpu_direct.sh full    # ~9 min: + nccl-tests side by side, graph mode, faults, doctor
# Needs: .whl/ (pydantic, typer, rich, nccl4py, cuda-core, cuda-pathfinder ... as wheels for Python 3.12)
# and .gpurun/nccl-tests (NVIDIA/nccl-tests source), both carried. Every step is bounded by `timeout`;
# logs go under $OUT; a short summary is printed LAST.
set -u
MODE="${1:-smoke}"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
OUT="${OUT:-/tmp/gpufabric-out}"
mkdir -p "$OUT"
LOG="$OUT/direct.log"
: > "$LOG"
SUMMARY=()
say() { echo "== $*" | tee -a "$LOG"; }
record() { SUMMARY+=("$1"); echo "-> $1" | tee -a "$LOG"; }

timeout 120 python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl >>"$LOG" 2>&1
export PYTHONPATH="/tmp/site:$PWD/src"
GF="python3 -m gpufabric.cli"
NCCL_DIR=$(python3 -c "import nvidia.nccl, os; print(os.path.dirname(nvidia.nccl.__file__) if nvidia.nccl.__file__ else list(nvidia.nccl.__path__)[0])" 2>/dev/null)
export LD_LIBRARY_PATH="$NCCL_DIR/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

say "host $(hostname) $(date -u +%FT%TZ) mode $MODE"
timeout 30 nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | tee -a "$LOG"
timeout 60 python3 -c "import torch, nccl, cuda.core; print('torch', torch.__version__, 'torch-nccl', torch.cuda.nccl.version(), 'cuda.core', cuda.core.__version__)" 2>&1 | tee -a "$LOG"

# nccl-tests, built in the background while the engine runs (NCCL from torch's wheel, MPI=1).
NT=.gpurun/nccl-tests
( mkdir -p /tmp/ncclhome/lib && ln -sf "$NCCL_DIR/include" /tmp/ncclhome/include \
  && ln -sf "$NCCL_DIR/lib/libnccl.so.2" /tmp/ncclhome/lib/libnccl.so.2 \
  && ln -sf libnccl.so.2 /tmp/ncclhome/lib/libnccl.so \
  && cd $NT && timeout 300 make -j16 MPI=1 MPI_HOME=/usr/lib/x86_64-linux-gnu/openmpi NCCL_HOME=/tmp/ncclhome \
     CUDA_HOME=/usr/local/cuda NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" \
     CPPFLAGS="-I/usr/lib/x86_64-linux-gnu/openmpi/include" ) >"$OUT/nccl-tests-build.log" 2>&1 &
BUILD=$!

say "1 rank, direct engine, every collective, both columns"
timeout 120 $GF bench --engine nccl -c all -b 8 -e 16M -f 8 -n 20 --run-dir "$OUT/r1" >"$OUT/r1.txt" 2>>"$LOG"
record "1 rank direct: exit $? | $(grep -c '^ *[0-9]' "$OUT/r1.txt") rows"
head -30 "$OUT/r1.txt" | tee -a "$LOG"

say "per-call overhead of the binding (1 rank, 8 B)"
timeout 60 python3 benchmarks/direct_overhead.py --calls 20000 --size 8 2>&1 | tee "$OUT/overhead.json" | tee -a "$LOG"

say "2 virtual nodes with MPS, every collective incl. gather/scatter/alltoallv, --check"
timeout 180 $GF bench --engine nccl --virtual-nodes 2 --mps -c all,gather,scatter,alltoallv -b 8 -e 1M -f 8 -n 20 \
  --run-dir "$OUT/v2" >"$OUT/v2.txt" 2>>"$LOG"
record "2 vnodes direct --check: exit $? | $(grep -c '^ *[0-9]' "$OUT/v2.txt") rows"
tail -40 "$OUT/v2.txt" | tee -a "$LOG"
grep -h "NCCL_HOSTID\|via NET" "$OUT"/v2/nccl/*.log 2>/dev/null | head -4 | tee -a "$LOG"

wait $BUILD; record "nccl-tests build: exit $? | $(ls $NT/build/*_perf 2>/dev/null | wc -l) binaries"
tail -3 "$OUT/nccl-tests-build.log" >> "$LOG"

if [ -x $NT/build/all_reduce_perf ]; then
  say "nccl-tests 1 rank all_reduce 8 B - 16 MB"
  timeout 60 $NT/build/all_reduce_perf -b 8 -e 16M -f 8 -n 20 -w 5 -c 1 -g 1 >"$OUT/nt1.txt" 2>&1
  record "nccl-tests 1 rank: exit $?"
  grep -E '^ +[0-9]' "$OUT/nt1.txt" | head -10 | tee -a "$LOG"
fi

tar -czf "$OUT/runs.tgz" -C "$OUT" r1 v2 2>/dev/null && rm -rf "$OUT/r1" "$OUT/v2"
echo "================ summary"
printf '%s\n' "${SUMMARY[@]}"
