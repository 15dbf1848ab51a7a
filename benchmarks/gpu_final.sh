#!/usr/bin/env bash
# The last GPU figures of a session: the whole-command comparison with nccl-tests on 2 virtual nodes
# (byte-compiled, as pip installs), start-up, train-bench on virtual nodes, and isolate's statistical
# proof with one slowed rank and none. Needs .whl/ and .gpurun/nccl-tests carried; ~6 min on one H100.
set -u
LOG="${OUT:-/tmp/gpufabric-out}/final.log"
source "$(dirname "$0")/gpu_lib.sh"
: > "$LOG"
gpu_python_setup
B=$NT/build
build_nccl_tests &
BUILD=$!
R="$OUT/runs"; mkdir -p "$R"

t0=$(now); timeout 60 python3 -c "import gpufabric.cli.app"; record "import of the CLI (byte-compiled): $(since $t0) s"
t0=$(now); timeout 60 python3 -c "import gpufabric.engines.nccl.rank"; record "import of the rank program: $(since $t0) s"
t0=$(now); timeout 60 $GF bench --engine nccl -b 8 -e 8 -n 5 -w 1 --batches 1 --no-check --run-dir "$R/one" >/dev/null 2>&1
record "ours one 8 B size, whole command: $(since $t0) s"

timeout 240 $GF train-bench --virtual-nodes 2 --mps --model tiny --steps 5 --warmup-steps 2 --no-scaling \
  --run-dir "$R/train" >"$R/train.txt" 2>"$R/train.err"
record "train-bench --virtual-nodes 2: exit $? | $(grep -m3 -iE 'samples/s|busbw|comm' "$R/train.txt" | tr -s ' ' | tr '\n' ' ' | cut -c1-220) | err: $(tail -1 "$R/train.err" | cut -c1-160)"

for spec in "slow:rank=2:delay_ms=50" ""; do
  name=${spec:+slowed}; name=${name:-healthy}
  GPUFABRIC_FAULT="$spec" timeout 150 $GF isolate --nodes 4 --virtual-nodes --mps --run-dir "$R/isolate-$name" \
    >"$R/isolate-$name.txt" 2>"$R/isolate-$name.err"
  record "isolate $name: exit $? | $(grep -m3 -iE 'convict|not proven|no slow|slow node|p =|p=' "$R/isolate-$name.txt" "$R/isolate-$name.err" | tr '\n' ' ' | cut -c1-300)"
done

wait $BUILD; record "nccl-tests build: exit $?"
if [ -x $B/all_reduce_perf ]; then
  t0=$(now); timeout 60 $B/all_reduce_perf -b 8 -e 8 -n 5 -w 1 -c 0 -g 1 >/dev/null 2>&1
  record "nccl-tests one 8 B size, whole command: $(since $t0) s"
  MPI=$(mpirun_vnodes 2)
  for run in 1 2; do
    export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps/pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps/log
    mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
    t0=$(now); nvidia-cuda-mps-control -d
    timeout 120 $MPI $B/all_reduce_perf -b 8 -e 256M -f 2 -n 20 -w 5 -c 1 -g 1 \
      >"$R/nt2-$run.txt" 2>&1; rc=$?
    echo quit | nvidia-cuda-mps-control; sleep 1
    record "run $run nccl-tests 2 vnodes 8 B-256 MB -c 1 (incl. MPS start): exit $rc wall $(since $t0) s"
    unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
    t0=$(now); timeout 180 $GF bench --engine nccl --virtual-nodes 2 --mps -b 8 -e 256M -f 2 -n 20 -w 5 --batches 1 --check \
      --run-dir "$R/o2-$run" >/dev/null 2>>"$LOG"; rc=$?
    record "run $run gpufabric 2 vnodes --batches 1 --check: exit $rc wall $(since $t0) s"
  done
fi
tar -czf "$OUT/final-runs.tgz" -C "$OUT" runs nccl-tests-build.log 2>/dev/null && rm -rf "$R" "$OUT/nccl-tests-build.log"
print_summary
