# Shared by benchmarks/gpu.sh and its scenarios (benchmarks/scenarios/*.sh): the lent GPU machine's set-up,
# the nccl-tests build, and the summary lines printed last. Every scenario keeps NCCL's multicast off.
# A scenario sources this file again (old-style scripts do); under the harness the set-up and the build
# have already run once, so the second call of gpu_python_setup / build_nccl_tests costs nothing.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
# The lent machines reach nothing outside: no node snapshot asks a cloud metadata service there.
export GPUFABRIC_NO_METADATA=1
OUT="${OUT:-/tmp/gpufabric-out}"; mkdir -p "$OUT"
SUMMARY=()
# One summary for every scenario of a harness run (the harness names the file and the scenario).
SUMMARY_FILE="${SUMMARY_FILE:-$OUT/summary.txt}"
# shellcheck disable=SC2034  # GF and NT are the scenarios' (sourced after this file)
GF="python3 -m gpufabric.cli"
NT=.gpurun/nccl-tests

# say TEXT / record TEXT: a section header, and a summary line (also kept in $OUT/summary.txt so it
# survives a script stopped by its time limit). Both go to $LOG, which the script names.
say() { echo "== $*" | tee -a "$LOG"; }
record() {
  local line="${GPU_SCENARIO:+[$GPU_SCENARIO] }$1"
  SUMMARY+=("$line"); echo "-> $line" | tee -a "$LOG" "$SUMMARY_FILE" >/dev/null; echo "-> $line"
}
now() { date +%s.%N; }
# host_header: N (the GPUs here), NT_MPI (nccl-tests one process per GPU under mpirun, NCCL_NVLS_ENABLE
# passed on) and the line a scenario's log starts with: host, time, GPU and driver.
host_header() {
  N=$(timeout 30 nvidia-smi -L | wc -l)
  NT_MPI=(mpirun --allow-run-as-root --oversubscribe -np "$N" -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE)
  say "host $(hostname) $(date -u +%FT%TZ): $N x $(timeout 30 nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
}
since() { python3 -c "print(round($(now)-$1,2))"; }
# Under the harness the one summary of all scenarios comes last (gpu.sh prints it); alone, the script's.
print_summary() {
  [ -n "${GPU_HARNESS:-}" ] && return 0
  echo "================ summary"; printf '%s\n' "${SUMMARY[@]}"
}

# gpu_python_setup: our wheels (.whl/, carried) into /tmp/site, byte-compiled as pip installs for users
# (the lent image sets PYTHONDONTWRITEBYTECODE=1, which makes every start compile from source), this
# checkout first on PYTHONPATH, and torch's NCCL on LD_LIBRARY_PATH (the system's is older).
gpu_python_setup() {
  [ -n "${GPU_SETUP_DONE:-}" ] && return 0
  timeout 120 python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl >>"$LOG" 2>&1
  echo "PYTHONDONTWRITEBYTECODE=${PYTHONDONTWRITEBYTECODE:-unset}" >>"$LOG"
  unset PYTHONDONTWRITEBYTECODE
  python3 -m compileall -q -j 0 src /tmp/site >/dev/null 2>&1
  export PYTHONPATH="/tmp/site:$PWD/src"
  NCCL_DIR=$(python3 -c "import nvidia.nccl; print(list(nvidia.nccl.__path__)[0])" 2>/dev/null)
  export NCCL_DIR LD_LIBRARY_PATH="$NCCL_DIR/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  GPU_SETUP_DONE=1
}

# build_nccl_tests: NVIDIA/nccl-tests (.gpurun/nccl-tests, carried) with MPI=1 against torch's NCCL, for
# the H100/H200 (sm_90); the build's output goes to $OUT/nccl-tests-build.log. Build before timing
# anything: its compilers share the host's cores with the ranks being timed. Built once: a later call
# returns the first build's exit status and copies its log into this scenario's $OUT.
build_nccl_tests() {
  if [ -n "${NT_BUILD_RC:-}" ]; then
    [ "$NT_BUILD_LOG" -ef "$OUT/nccl-tests-build.log" ] || cp "$NT_BUILD_LOG" "$OUT/nccl-tests-build.log" 2>/dev/null
    return "$NT_BUILD_RC"
  fi
  ( mkdir -p /tmp/ncclhome/lib && ln -sf "$NCCL_DIR/include" /tmp/ncclhome/include \
    && ln -sf "$NCCL_DIR/lib/libnccl.so.2" /tmp/ncclhome/lib/libnccl.so.2 \
    && ln -sf libnccl.so.2 /tmp/ncclhome/lib/libnccl.so \
    && cd $NT && timeout 300 make -j16 MPI=1 MPI_HOME=/usr/lib/x86_64-linux-gnu/openmpi NCCL_HOME=/tmp/ncclhome \
       CUDA_HOME=/usr/local/cuda NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" \
       CPPFLAGS="-I/usr/lib/x86_64-linux-gnu/openmpi/include" ) >"$OUT/nccl-tests-build.log" 2>&1
  NT_BUILD_RC=$?; NT_BUILD_LOG="$OUT/nccl-tests-build.log"
  return "$NT_BUILD_RC"
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

# mps_start / mps_stop: NVIDIA MPS for virtual nodes sharing one GPU (what `--mps` does for our ranks),
# for the hand-made nccl-tests runs; mps_stop leaves the MPS variables unset for our own commands.
mps_start() {
  export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps/pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps/log
  mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"; nvidia-cuda-mps-control -d
}
mps_stop() {
  echo quit | nvidia-cuda-mps-control; sleep 1
  unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
}

# peak_watch PATTERN FILE: every 0.1 s, "peak GPU MiB, peak RSS KB of processes matching PATTERN" into
# FILE, until killed (run it in the background and kill its pid).
peak_watch() {
  local peak_gpu=0 peak_rss=0 g r p
  while true; do
    g=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits 2>/dev/null | sort -n | tail -1)
    [ "${g:-0}" -gt "$peak_gpu" ] && peak_gpu=$g
    for p in $(pgrep -f "$1"); do
      r=$(awk '/VmRSS/{print $2}' "/proc/$p/status" 2>/dev/null); [ "${r:-0}" -gt "$peak_rss" ] && peak_rss=$r
    done
    echo "$peak_gpu $peak_rss" > "$2"; sleep 0.1
  done
}

# small_median FILE COLLECTIVE: the median out-of-place time (us) over 8 B - 64 KB of one collective's
# table in a printed run, ours (`# gpufabric ... COLLECTIVE:`) or nccl-tests' (`COLLECTIVE_perf`): one
# number that moves when a whole run's small sizes shift.
small_median() {
  awk -v c="$2" '/^# (gpufabric|Collective test)/{f = ($0 ~ " " c ":" || $0 ~ " " c "_perf")} f && $1 ~ /^[0-9]+$/ && $1 >= 8 && $1 <= 65536 && $6 ~ /^[0-9.]+$/ {print $6}' "$1" \
    | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}
