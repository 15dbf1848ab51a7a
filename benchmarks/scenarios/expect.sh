#!/usr/bin/env bash
# The expected-performance model against nccl-tests (NVLink, forced socket), and every result judged (issue 32).
# On a lent machine of several GPUs: the node snapshot, the model against nccl-tests built there (NVLink and
# the forced socket path, >= 256 MB), NIC counters on the socket path, a verdict from bench / --self-test /
# --ab / doctor with no --instance-type, and every new gpu-marked test.
#   benchmarks/gpu.sh expect            # ~8 min on 4 GPUs; needs .whl/ and .gpurun/nccl-tests carried
#   benchmarks/gpu.sh expect:model      # ~4 min: the snapshot and the model against nccl-tests only
# What comes back: summary.txt, expect.log, expect-runs.tgz, node_snapshot.json. (Was gpu_expect.sh.)
MODE="${1:-full}"
G=$(timeout 30 nvidia-smi -L | wc -l)
say "host $(hostname) $(date -u +%FT%TZ), $G GPUs: $(timeout 30 nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
R="$OUT/runs"; mkdir -p "$R"
timeout 30 nvidia-smi topo -m >"$R/topo-m.txt" 2>&1
timeout 60 $GF snapshot --no-metadata --out "$OUT/node_snapshot.json" >"$R/snapshot.txt" 2>&1
record "snapshot: exit $? | $(grep -m3 -iE 'nvlink|gpus' "$R/snapshot.txt" | tr '\n' ' ' | cut -c1-200)"
GPUFABRIC_SNAPSHOT_OUT="$R/pytest_snapshot.json" timeout 120 python3 -m pytest -m gpu -q -p no:cacheprovider \
  -o addopts="-ra" tests/hardware >"$R/pytest-hardware.log" 2>&1
record "pytest -m gpu tests/hardware: exit $? | $(tail -1 "$R/pytest-hardware.log")"
build_nccl_tests
B=$NT/build
MPI="mpirun --allow-run-as-root -np $G -x NCCL_NVLS_ENABLE=0 -x LD_LIBRARY_PATH"
COLLS="all_reduce all_gather reduce_scatter alltoall broadcast"
for c in $COLLS; do
  timeout 90 $MPI $B/${c}_perf -b 256M -e 1G -f 2 -n 20 -w 5 -c 0 -g 1 >"$R/nt-nvlink-$c.txt" 2>&1
done
for c in $COLLS; do
  timeout 120 $MPI -x NCCL_P2P_DISABLE=1 -x NCCL_SHM_DISABLE=1 $B/${c}_perf -b 256M -e 256M -n 5 -w 2 -c 0 -g 1 \
    >"$R/nt-socket-$c.txt" 2>&1
done
EXP="-c all_reduce -c all_gather -c reduce_scatter -c alltoall -c broadcast"
for size in 256M 1G; do
  timeout 60 $GF expect --snapshot "$OUT/node_snapshot.json" --size $size $EXP --format json >"$R/expect-nvlink-$size.json" 2>>"$LOG"
  timeout 60 $GF expect --snapshot "$OUT/node_snapshot.json" --size $size $EXP >"$R/expect-nvlink-$size.txt" 2>&1
done
timeout 60 $GF expect --snapshot "$OUT/node_snapshot.json" --fabric-off --size 256M $EXP --format json >"$R/expect-socket-256M.json" 2>>"$LOG"
timeout 60 $GF expect --fabric-off --size 256M $EXP >"$R/expect-socket-256M.txt" 2>&1
for size in 256M 1G; do
  python3 benchmarks/expect_vs_nccl_tests.py "$R/expect-nvlink-$size.json" "$R"/nt-nvlink-*.txt >"$R/judge-nvlink-$size.md" 2>&1
  record "model vs nccl-tests, NVLink, $size: $(tail -1 "$R/judge-nvlink-$size.md")"
done
python3 benchmarks/expect_vs_nccl_tests.py "$R/expect-socket-256M.json" "$R"/nt-socket-*.txt --max-centre-error 25 >"$R/judge-socket-256M.md" 2>&1
record "model vs nccl-tests, forced socket, 256M: $(tail -1 "$R/judge-socket-256M.md")"

if [ "$MODE" = model ]; then
  NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 timeout 150 $GF bench --engine torch --ranks "$G" -c all_reduce -b 256M -e 256M -n 5 -w 2 \
    --run-dir "$R/b-socket-torch" >"$R/b-socket-torch.txt" 2>&1
  record "bench forced socket (torch): exit $? | $(grep -m1 -i 'NIC traffic' "$R/b-socket-torch.txt" | cut -c1-220)"
  tar -czf "$OUT/expect-runs.tgz" -C "$OUT" runs nccl-tests-build.log 2>/dev/null && rm -rf "$R" "$OUT/nccl-tests-build.log"
  exit 0
fi
say "our bench with no --instance-type: NVLink, forced socket (NIC counters), self-test, A/B, doctor"
timeout 150 $GF bench --ranks "$G" -c all_reduce -b 256M -e 1G -f 4 -n 20 -w 5 --run-dir "$R/b-nvlink" >"$R/b-nvlink.txt" 2>&1
record "bench NVLink: exit $? | $(grep -m1 -i 'expected' "$R/b-nvlink.txt" | cut -c1-200)"
for eng in nccl torch; do
  NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 timeout 150 $GF bench --engine $eng --ranks "$G" -c all_reduce -b 256M -e 256M -n 5 -w 2 \
    --run-dir "$R/b-socket-$eng" >"$R/b-socket-$eng.txt" 2>&1
  record "bench forced socket ($eng): exit $? | $(grep -m1 -i 'NIC traffic' "$R/b-socket-$eng.txt" | cut -c1-220)"
done
timeout 200 $GF bench --self-test -b 1M -e 256M -f 16 --run-dir "$R/self-test" >"$R/self-test.txt" 2>&1
record "bench --self-test: exit $? | $(grep -m2 -iE 'expected|verdict' "$R/self-test.txt" | tr '\n' ' ' | cut -c1-220)"
timeout 240 $GF bench --ab --ranks "$G" -b 16M -e 256M -f 4 -n 5 --rounds 2 --run-dir "$R/ab" >"$R/ab.txt" 2>&1
record "bench --ab: exit $? | $(grep -m2 -iE 'of .*expected|speed' "$R/ab.txt" | tr '\n' ' ' | cut -c1-220)"
timeout 60 $GF doctor "$R/b-nvlink" >"$R/doctor-nvlink.txt" 2>&1
record "doctor NVLink run: exit $? | $(grep -m1 -iE 'expected' "$R/doctor-nvlink.txt" | cut -c1-200)"
timeout 60 $GF doctor "$R/b-socket-nccl" >"$R/doctor-socket.txt" 2>&1
record "doctor socket run: exit $? | $(grep -m1 -iE 'expected' "$R/doctor-socket.txt" | cut -c1-200)"

say "every gpu-marked test of the new code"
NEW=$(ls tests/hardware/test_*gpu*.py tests/expect/test_*gpu*.py tests/analysis/test_*judge*gpu*.py tests/bench/test_*traffic*gpu*.py 2>/dev/null | tr '\n' ' ')
timeout 300 python3 -m pytest -m gpu -q -p no:cacheprovider -o addopts="-ra" $NEW >"$R/pytest-new.log" 2>&1
record "pytest -m gpu (new: $NEW): exit $? | $(tail -1 "$R/pytest-new.log")"
tar -czf "$OUT/expect-runs.tgz" -C "$OUT" runs nccl-tests-build.log 2>/dev/null && rm -rf "$R" "$OUT/nccl-tests-build.log"
