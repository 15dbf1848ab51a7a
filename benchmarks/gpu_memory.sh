#!/usr/bin/env bash
# Host RSS per rank, GPU memory for -e 8G, and time to the first measured row: the direct engine and
# nccl-tests on one GPU (issue: torch-free engine). Needs .whl/ and .gpurun/nccl-tests like gpu_direct.sh.
#   benchmarks/gpu_memory.sh     # ~2 min
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
OUT="${OUT:-/tmp/gpufabric-out}"; mkdir -p "$OUT"
timeout 120 python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH="/tmp/site:$PWD/src"
NCCL_DIR=$(python3 -c "import nvidia.nccl; print(list(nvidia.nccl.__path__)[0])")
export LD_LIBRARY_PATH="$NCCL_DIR/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
NT=.gpurun/nccl-tests
( mkdir -p /tmp/ncclhome/lib && ln -sf "$NCCL_DIR/include" /tmp/ncclhome/include \
  && ln -sf "$NCCL_DIR/lib/libnccl.so.2" /tmp/ncclhome/lib/libnccl.so.2 && ln -sf libnccl.so.2 /tmp/ncclhome/lib/libnccl.so \
  && cd $NT && timeout 200 make -j16 NCCL_HOME=/tmp/ncclhome CUDA_HOME=/usr/local/cuda \
     NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" ) >"$OUT/build.log" 2>&1 &
BUILD=$!
# watch: peak GPU memory used (MiB) and peak RSS (KB) of processes matching $1, every 0.2 s, until killed
watch() { peak_gpu=0; peak_rss=0; while true; do
  g=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits 2>/dev/null | head -1); [ "${g:-0}" -gt $peak_gpu ] && peak_gpu=$g
  for p in $(pgrep -f "$1"); do r=$(awk '/VmRSS/{print $2}' /proc/$p/status 2>/dev/null); [ "${r:-0}" -gt $peak_rss ] && peak_rss=$r; done
  echo "$peak_gpu $peak_rss" > "$2"; sleep 0.2; done; }
base=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | head -1)
watch "engines.nccl.rank" "$OUT/peak-ours.txt" & W=$!
t0=$(date +%s.%N)
timeout 180 python3 -m gpufabric.cli bench --engine nccl -b 8G -e 8G -n 5 -w 1 --batches 1 --no-check --run-dir "$OUT/r8" >/dev/null 2>"$OUT/r8.err" &
B=$!; first=""
while kill -0 $B 2>/dev/null; do
  if [ -z "$first" ] && grep -q '"record":"row"' "$OUT/r8/result.jsonl" 2>/dev/null; then first=$(python3 -c "import time;print(round(time.time()-$t0,2))"); fi; sleep 0.1; done
wait $B; rc=$?; kill $W
echo "ours -e 8G: exit $rc, baseline GPU MiB $base, peak GPU MiB / rank RSS KB: $(cat "$OUT/peak-ours.txt"), first row at ${first}s"
t0=$(date +%s.%N); timeout 60 python3 -m gpufabric.cli bench --engine nccl -b 8 -e 8 -n 5 -w 1 --batches 1 --no-check --run-dir "$OUT/r1" >/dev/null 2>&1
echo "ours, one 8 B size, whole command: $(python3 -c "import time;print(round(time.time()-$t0,2))") s"
wait $BUILD
if [ -x $NT/build/all_reduce_perf ]; then
  watch "all_reduce_perf" "$OUT/peak-nt.txt" & W=$!
  timeout 120 $NT/build/all_reduce_perf -b 8G -e 8G -n 5 -w 1 -c 0 -g 1 > "$OUT/nt8.txt" 2>&1; rc=$?; kill $W
  echo "nccl-tests -e 8G -c 0: exit $rc, peak GPU MiB / RSS KB: $(cat "$OUT/peak-nt.txt")"
  t0=$(date +%s.%N); timeout 60 $NT/build/all_reduce_perf -b 8 -e 8 -n 5 -w 1 -c 0 -g 1 >/dev/null 2>&1
  echo "nccl-tests, one 8 B size, whole command: $(python3 -c "import time;print(round(time.time()-$t0,2))") s"
fi
