# Shared by the benchmarks/gpu_*.sh scripts (source it): the lent GPU machine's set-up, the nccl-tests
# build, and the summary lines a script prints last. Every script keeps NCCL's multicast off.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
# The lent machines reach nothing outside: no node snapshot asks a cloud metadata service there.
export GPUFABRIC_NO_METADATA=1
OUT="${OUT:-/tmp/gpufabric-out}"; mkdir -p "$OUT"
SUMMARY=()
GF="python3 -m gpufabric.cli"
NT=.gpurun/nccl-tests

# say TEXT / record TEXT: a section header, and a summary line (also kept in $OUT/summary.txt so it
# survives a script stopped by its time limit). Both go to $LOG, which the script names.
say() { echo "== $*" | tee -a "$LOG"; }
record() { SUMMARY+=("$1"); echo "-> $1" | tee -a "$LOG" "$OUT/summary.txt" >/dev/null; echo "-> $1"; }
now() { date +%s.%N; }
since() { python3 -c "print(round($(now)-$1,2))"; }
print_summary() { echo "================ summary"; printf '%s\n' "${SUMMARY[@]}"; }

# gpu_python_setup: our wheels (.whl/, carried) into /tmp/site, byte-compiled as pip installs for users
# (the lent image sets PYTHONDONTWRITEBYTECODE=1, which makes every start compile from source), this
# checkout first on PYTHONPATH, and torch's NCCL on LD_LIBRARY_PATH (the system's is older).
gpu_python_setup() {
  timeout 120 python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl >>"$LOG" 2>&1
  echo "PYTHONDONTWRITEBYTECODE=${PYTHONDONTWRITEBYTECODE:-unset}" >>"$LOG"
  unset PYTHONDONTWRITEBYTECODE
  python3 -m compileall -q -j 0 src /tmp/site >/dev/null 2>&1
  export PYTHONPATH="/tmp/site:$PWD/src"
  NCCL_DIR=$(python3 -c "import nvidia.nccl; print(list(nvidia.nccl.__path__)[0])" 2>/dev/null)
  export NCCL_DIR LD_LIBRARY_PATH="$NCCL_DIR/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
}

# build_nccl_tests: NVIDIA/nccl-tests (.gpurun/nccl-tests, carried) with MPI=1 against torch's NCCL, for
# the H100/H200 (sm_90); the build's output goes to $OUT/nccl-tests-build.log. Build before timing
# anything: its compilers share the host's cores with the ranks being timed.
build_nccl_tests() {
  ( mkdir -p /tmp/ncclhome/lib && ln -sf "$NCCL_DIR/include" /tmp/ncclhome/include \
    && ln -sf "$NCCL_DIR/lib/libnccl.so.2" /tmp/ncclhome/lib/libnccl.so.2 \
    && ln -sf libnccl.so.2 /tmp/ncclhome/lib/libnccl.so \
    && cd $NT && timeout 300 make -j16 MPI=1 MPI_HOME=/usr/lib/x86_64-linux-gnu/openmpi NCCL_HOME=/tmp/ncclhome \
       CUDA_HOME=/usr/local/cuda NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" \
       CPPFLAGS="-I/usr/lib/x86_64-linux-gnu/openmpi/include" ) >"$OUT/nccl-tests-build.log" 2>&1
}

# mpirun_vnodes N: the hand-made command that runs nccl-tests on N virtual nodes of this host (the
# reference our driver is compared with): one NCCL_HOSTID per rank, the rank's GPU 0, MPS's directories.
mpirun_vnodes() {
  cat > /tmp/vnode.sh <<'W'
#!/bin/bash
export NCCL_HOSTID=vnode$OMPI_COMM_WORLD_RANK
exec "$@"
W
  chmod +x /tmp/vnode.sh
  echo "mpirun --allow-run-as-root --oversubscribe -np $1 -x NCCL_TESTS_DEVICE=0 -x NCCL_NVLS_ENABLE=0 -x LD_LIBRARY_PATH -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY /tmp/vnode.sh"
}
