#!/usr/bin/env bash
# The direct NCCL engine: 1 rank and 2/4 virtual nodes, every collective --check, beside nccl-tests (modes below).
#   benchmarks/gpu.sh direct:smoke   # ~4 min: 1 rank, 2 virtual nodes, every collective --check
#   benchmarks/gpu.sh direct:full    # ~9 min: + nccl-tests side by side, graph mode, every collective, spread, faults, doctor
#   benchmarks/gpu.sh direct:final   # ~9 min: smoke + all_reduce side by side + pytest -m gpu + tune/--ab/isolate on virtual nodes
#   benchmarks/gpu.sh direct:verify  # ~4 min: pytest -m gpu + 2 virtual nodes 8 B - 256 MB, --check and --no-check, beside nccl-tests
# One H100; needs .whl/ and .gpurun/nccl-tests carried. What comes back: summary.txt, direct.log, runs*.tgz.
# (Was benchmarks/gpu_direct.sh MODE.)
MODE="${1:-smoke}"
LOG="$OUT/direct.log"
: > "$LOG"
build_nccl_tests
say "host $(hostname) $(date -u +%FT%TZ) mode $MODE"
timeout 30 nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | tee -a "$LOG"
timeout 60 python3 -c "import torch, nccl, cuda.core; print('torch', torch.__version__, 'torch-nccl', torch.cuda.nccl.version(), 'cuda.core', cuda.core.__version__)" 2>&1 | tee -a "$LOG"

if [ "$MODE" != verify ]; then
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

fi
tail -3 "$OUT/nccl-tests-build.log" >> "$LOG"

if [ -x $NT/build/all_reduce_perf ]; then
  say "nccl-tests 1 rank all_reduce 8 B - 16 MB"
  timeout 60 $NT/build/all_reduce_perf -b 8 -e 16M -f 8 -n 20 -w 5 -c 1 -g 1 >"$OUT/nt1.txt" 2>&1
  record "nccl-tests 1 rank: exit $?"
  grep -E '^ +[0-9]' "$OUT/nt1.txt" | head -10 | tee -a "$LOG"
fi


if { [ "$MODE" = full ] || [ "$MODE" = final ]; } && [ -x $NT/build/all_reduce_perf ]; then
  B=$NT/build
  say "1 rank side by side, 8 B - 64 KB, eager and graph"
  timeout 60 $B/all_reduce_perf -b 8 -e 64K -f 2 -n 1000 -w 50 -c 0 -g 1 >"$OUT/nt1s.txt" 2>&1
  timeout 60 $B/all_reduce_perf -b 8 -e 64K -f 2 -n 1000 -w 50 -c 0 -g 1 -G 1 >"$OUT/nt1g.txt" 2>&1
  timeout 90 $GF bench --engine nccl -b 8 -e 64K -f 2 -n 1000 -w 50 --batches 3 --no-check --run-dir "$OUT/o1s" >/dev/null 2>>"$LOG"
  timeout 90 $GF bench --engine nccl -b 8 -e 64K -f 2 -n 1000 -w 50 --batches 3 --no-check --graph --run-dir "$OUT/o1g" >/dev/null 2>>"$LOG"
  python3 benchmarks/side_by_side.py "$OUT/nt1s.txt" "$OUT/o1s/result.json" > "$OUT/sbs.md" 2>&1
  echo "### graph" >> "$OUT/sbs.md"; python3 benchmarks/side_by_side.py "$OUT/nt1g.txt" "$OUT/o1g/result.json" >> "$OUT/sbs.md" 2>&1
  record "1 rank: $(grep -h summary "$OUT/sbs.md" | tr '\n' ' ')"

  say "2 virtual nodes (MPS), all_reduce 8 B - 256 MB, nccl-tests then gpufabric, whole-command wall time"
  mps_start
  MPI=$(mpirun_vnodes 2)
  t0=$(now); timeout 120 $MPI $B/all_reduce_perf -b 8 -e 256M -f 2 -n 20 -w 5 -c 1 -g 1 >"$OUT/nt2.txt" 2>&1; rc=$?
  record "nccl-tests 2 vnodes 8B-256MB: exit $rc wall $(since "$t0") s"
  timeout 60 $MPI $B/all_reduce_perf -b 8 -e 64K -f 2 -n 1000 -w 50 -c 0 -g 1 >"$OUT/nt2s.txt" 2>&1
  timeout 60 $MPI $B/all_reduce_perf -b 8 -e 64K -f 2 -n 1000 -w 50 -c 0 -g 1 -G 1 >"$OUT/nt2g.txt" 2>&1
  for c in ${COLLS:-all_gather reduce_scatter alltoall broadcast reduce sendrecv gather scatter alltoallv}; do
    timeout 60 $MPI $B/${c}_perf -b 1M -e 64M -f 4 -n 20 -w 5 -c 0 -g 1 >"$OUT/nt2-$c.txt" 2>&1
  done
  [ "$MODE" = full ] && for _ in 1 2 3 4 5; do timeout 60 $MPI $B/all_reduce_perf -b 1M -e 64M -f 64 -n 20 -w 5 -c 0 -g 1 2>&1 | grep -E '^ +[0-9]' >> "$OUT/nt2-spread.txt"; done
  mps_stop
  t0=$(now); timeout 180 $GF bench --engine nccl --virtual-nodes 2 --mps -b 8 -e 256M -f 2 -n 20 -w 5 --batches 1 --run-dir "$OUT/o2" >/dev/null 2>>"$LOG"; rc=$?
  record "gpufabric 2 vnodes 8B-256MB --batches 1: exit $rc wall $(since "$t0") s"
  timeout 120 $GF bench --engine nccl --virtual-nodes 2 --mps -b 8 -e 64K -f 2 -n 1000 -w 50 --batches 3 --no-check --run-dir "$OUT/o2s" >/dev/null 2>>"$LOG"
  timeout 120 $GF bench --engine nccl --virtual-nodes 2 --mps -b 8 -e 64K -f 2 -n 1000 -w 50 --batches 3 --no-check --graph --run-dir "$OUT/o2g" >/dev/null 2>>"$LOG"
  timeout 240 $GF bench --engine nccl --virtual-nodes 2 --mps -c ${OCOLLS:-all,gather,scatter,alltoallv} -b 1M -e 64M -f 4 -n 20 -w 5 --batches 1 --no-check --run-dir "$OUT/o2c" >/dev/null 2>>"$LOG"
  [ "$MODE" = full ] && for _ in 1 2 3 4 5; do timeout 60 $GF bench --engine nccl --virtual-nodes 2 --mps -b 1M -e 64M -f 64 -n 20 -w 5 --batches 1 --no-check --format csv 2>/dev/null | grep -v '^#' >> "$OUT/o2-spread.csv"; done
  { echo "### 2 vnodes 8B-256MB"; python3 benchmarks/side_by_side.py "$OUT/nt2.txt" "$OUT/o2/result.json"
    echo "### 2 vnodes small eager"; python3 benchmarks/side_by_side.py "$OUT/nt2s.txt" "$OUT/o2s/result.json"
    echo "### 2 vnodes small graph"; python3 benchmarks/side_by_side.py "$OUT/nt2g.txt" "$OUT/o2g/result.json"
    for c in ${COLLS:-all_gather reduce_scatter alltoall broadcast reduce sendrecv gather scatter alltoallv}; do
      python3 benchmarks/side_by_side.py "$OUT/nt2-$c.txt" "$OUT/o2c/result.json" --collective $c; done
    echo "### spread nccl-tests"; cat "$OUT/nt2-spread.txt"; echo "### spread gpufabric"; cat "$OUT/o2-spread.csv"
  } >> "$OUT/sbs.md" 2>&1
  record "2 vnodes: $(grep -h summary "$OUT/sbs.md" | tail -n +3 | tr '\n' ' ')"

  if [ "$MODE" = full ]; then
  say "4 virtual nodes, every collective with --check"
  timeout 240 $GF bench --engine nccl --virtual-nodes 4 --mps -c all,gather,scatter,alltoallv -b 8 -e 256K -f 8 -n 5 -w 2 --batches 1 --run-dir "$OUT/v4" >"$OUT/v4.txt" 2>>"$LOG"
  record "4 vnodes --check: exit $? | $(grep -c '^ *[0-9]' "$OUT/v4.txt") rows | wrong: $(grep -c 'wrong element' "$OUT/v4.txt")"

  fi
  say "--engine nccl-tests through our driver, every binary, 1 rank"
  timeout 150 $GF bench --engine nccl-tests --nccl-tests-dir $B -c all,gather,scatter -b 8 -e 64M -f 4 -n 5 -w 2 --run-dir "$OUT/ntd" >"$OUT/ntd.txt" 2>>"$LOG"
  record "nccl-tests engine, every collective, 1 rank: exit $? | $(grep -c '^ *[0-9]' "$OUT/ntd.txt") rows"

  if [ "$MODE" = full ]; then
  say "faults on NCCL ranks (2 vnodes): hang, crash, SIGTERM"
  GPUFABRIC_FAULT=hang:rank=1:size=4K timeout 120 $GF bench --engine nccl --virtual-nodes 2 --mps -b 8 -e 64K -f 8 --timeout-stage size=15 --run-dir "$OUT/fh" >"$OUT/fh.txt" 2>&1
  record "hang: exit $? (want 124) | ranks left $(pgrep -f engines.nccl.rank | wc -l) | $(tail -1 "$OUT/fh.txt" | cut -c1-160)"
  GPUFABRIC_FAULT=crash:rank=1:size=4K timeout 120 $GF bench --engine nccl --virtual-nodes 2 --mps -b 8 -e 64K -f 8 --run-dir "$OUT/fc" >"$OUT/fc.txt" 2>&1
  record "crash: exit $? (want 1) | ranks left $(pgrep -f engines.nccl.rank | wc -l) | $(tail -1 "$OUT/fc.txt" | cut -c1-160)"
  $GF bench --engine nccl --virtual-nodes 2 --mps -b 64M -e 256M -n 2000 --run-dir "$OUT/ft" >"$OUT/ft.txt" 2>&1 &
  pid=$!; sleep 25; kill -TERM $pid; for _ in $(seq 1 30); do kill -0 $pid 2>/dev/null || break; sleep 1; done; wait $pid; rc=$?
  record "SIGTERM: exit $rc (want 143) | ranks left $(pgrep -f engines.nccl.rank | wc -l) | $(tail -1 "$OUT/ft.txt" | cut -c1-160)"
  pkill -9 -f engines.nccl.rank 2>/dev/null

  fi
  say "doctor on the 2-vnode run"
  timeout 60 $GF doctor "$OUT/o2" >"$OUT/doctor-v2.txt" 2>&1
  record "doctor 2 vnodes: exit $? | $(grep -m1 -i 'verdict\|PASS\|FAIL\|WARN' "$OUT/doctor-v2.txt" | cut -c1-160)"
  tar -czf "$OUT/runs-full.tgz" -C "$OUT" o1s o1g o2 o2s o2g o2c v4 ntd fh fc ft nt1s.txt nt1g.txt nt2.txt nt2s.txt nt2g.txt nt2-*.txt doctor-v2.txt v4.txt ntd.txt fh.txt fc.txt ft.txt 2>/dev/null
  rm -rf "$OUT"/o1s "$OUT"/o1g "$OUT"/o2 "$OUT"/o2s "$OUT"/o2g "$OUT"/o2c "$OUT"/v4 "$OUT"/ntd "$OUT"/fh "$OUT"/fc "$OUT"/ft "$OUT"/nt*.txt "$OUT"/fh.txt "$OUT"/fc.txt "$OUT"/ft.txt "$OUT"/v4.txt "$OUT"/ntd.txt "$OUT"/doctor-v2.txt "$OUT"/o2-spread.csv "$OUT"/overhead.json
fi


if { [ "$MODE" = full ] || [ "$MODE" = final ]; } && [ -x $NT/build/all_reduce_perf ]; then
  say "pytest -m gpu: the direct engine and the nccl-tests engine against the real binaries"
  PATH="$PWD/$NT/build:$PATH" timeout 300 python3 -m pytest -m gpu -q -p no:cacheprovider -o addopts="-ra" \
    tests/engines/nccl/test_gpu_direct.py tests/engines/nccl_tests/test_nccl_tests_engine.py >"$OUT/pytest-gpu.log" 2>&1
  record "pytest -m gpu (direct, nccl-tests engine): exit $? | $(tail -1 "$OUT/pytest-gpu.log")"

  say "tune on the socket path between 2 virtual nodes (MPS)"
  timeout 240 $GF tune --virtual-nodes 2 --mps --ranks 2 --size 64M -b 64M -e 64M --budget 6 --repeats 2 -n 3 --batches 2 \
    --run-dir "$OUT/tune" >"$OUT/tune.txt" 2>>"$LOG"
  record "tune 2 vnodes: exit $? | $(grep -m1 -i 'best\|leader\|winner' "$OUT/tune.txt" | cut -c1-160)"

  say "bench --ab on 2 virtual nodes"
  timeout 200 $GF bench --ab --virtual-nodes 2 --mps --ranks 2 -b 1M -e 256M -f 16 -n 5 --rounds 2 \
    --run-dir "$OUT/ab" >"$OUT/ab.txt" 2>>"$LOG"
  record "ab 2 vnodes: exit $? | $(grep -m1 -i 'speed\|verdict' "$OUT/ab.txt" | cut -c1-160)"

  say "isolate: 4 virtual nodes, rank 2 slowed by 5 ms per call"
  GPUFABRIC_FAULT=slow:rank=2:delay_ms=5 timeout 240 $GF isolate --nodes 4 --virtual-nodes --mps --size 4M \
    --run-dir "$OUT/iso" >"$OUT/iso.txt" 2>>"$LOG"
  record "isolate 4 vnodes slow rank 2: exit $? (want 1) | $(grep -m2 -i 'node0002\|slow\|convict' "$OUT/iso.txt" | tr '\n' ' ' | cut -c1-200)"
  tar -czf "$OUT/runs-more.tgz" -C "$OUT" tune ab iso tune.txt ab.txt iso.txt pytest-gpu.log 2>/dev/null
  rm -rf "$OUT"/tune "$OUT"/ab "$OUT"/iso "$OUT"/tune.txt "$OUT"/ab.txt "$OUT"/iso.txt "$OUT"/pytest-gpu.log
fi


if [ "$MODE" = verify ] && [ -x $NT/build/all_reduce_perf ]; then
  B=$NT/build
  say "pytest -m gpu: the direct engine and the nccl-tests engine against the real binaries"
  PATH="$PWD/$NT/build:$PATH" timeout 240 python3 -m pytest -m gpu -q -p no:cacheprovider -o addopts="-ra" \
    tests/engines/nccl/test_gpu_direct.py tests/engines/nccl_tests/test_nccl_tests_engine.py >"$OUT/pytest-gpu.log" 2>&1
  record "pytest -m gpu (direct, nccl-tests engine): exit $? | $(tail -1 "$OUT/pytest-gpu.log")"
  grep -E "^(FAILED|E )" "$OUT/pytest-gpu.log" | head -8 | tee -a "$LOG"
  mps_start
  MPI=$(mpirun_vnodes 2)
  t0=$(now); timeout 120 $MPI $B/all_reduce_perf -b 8 -e 256M -f 2 -n 20 -w 5 -c 1 -g 1 >"$OUT/nt2.txt" 2>&1; rc=$?
  record "nccl-tests 2 vnodes 8B-256MB -c 1: exit $rc wall $(since "$t0") s"
  mps_stop
  t0=$(now); timeout 180 $GF bench --engine nccl --virtual-nodes 2 --mps -b 8 -e 256M -f 2 -n 20 -w 5 --batches 1 --run-dir "$OUT/o2" >/dev/null 2>>"$LOG"; rc=$?
  record "gpufabric 2 vnodes 8B-256MB --batches 1 --check: exit $rc wall $(since "$t0") s"
  t0=$(now); timeout 180 $GF bench --engine nccl --virtual-nodes 2 --mps -b 8 -e 256M -f 2 -n 20 -w 5 --batches 1 --no-check --run-dir "$OUT/o2n" >/dev/null 2>>"$LOG"; rc=$?
  record "gpufabric 2 vnodes 8B-256MB --batches 1 --no-check: exit $rc wall $(since "$t0") s"
  python3 benchmarks/side_by_side.py "$OUT/nt2.txt" "$OUT/o2/result.json" > "$OUT/sbs-verify.md" 2>&1
  record "$(grep -h summary "$OUT/sbs-verify.md")"
  tar -czf "$OUT/runs-verify.tgz" -C "$OUT" o2 o2n nt2.txt pytest-gpu.log 2>/dev/null
  rm -rf "$OUT"/o2 "$OUT"/o2n "$OUT"/nt2.txt
fi

tar -czf "$OUT/runs.tgz" -C "$OUT" r1 v2 2>/dev/null && rm -rf "$OUT/r1" "$OUT/v2"
rm -f "$OUT/nccl-tests-build.log"
