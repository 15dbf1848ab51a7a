#!/usr/bin/env bash
# One GPU's proof (issues 32, 35): node snapshot, 2 virtual nodes' expectation judged, all_reduce beside nccl-tests.
#   benchmarks/gpu.sh vnodes-expect     # ~6 min on nvidia-h100-x1; needs .whl/ and .gpurun/nccl-tests carried
# The NET-loopback expectation of 2 virtual nodes (NCCL_HOSTID each, MPS, NET/Socket) stated and judged,
# and the 2-node all_reduce side by side with nccl-tests built there, every raw output kept.
# What comes back: summary.txt, vnodes-expect.log, one-runs.tgz, node_snapshot.json.
# (Was benchmarks/gpu_one.sh.)
build_nccl_tests
say "host $(hostname) $(date -u +%FT%TZ): $(timeout 30 nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
R="$OUT/runs"; mkdir -p "$R"
timeout 60 $GF snapshot --no-metadata --out "$OUT/node_snapshot.json" >"$R/snapshot.txt" 2>&1
record "snapshot: exit $? | $(sed -n 2,3p "$R/snapshot.txt" | tr '\n' ' ' | cut -c1-160)"
timeout 60 $GF expect --virtual-nodes 2 -c all_reduce --size 256M >"$R/expect-vnodes2.txt" 2>&1
record "expect --virtual-nodes 2: exit $? | $(grep -m1 all_reduce "$R/expect-vnodes2.txt" | tr -s ' ' | cut -c1-160)"
B=$NT/build
if [ -x "$B/all_reduce_perf" ]; then
  mps_start
  MPI="$(mpirun_vnodes 2)"
  t0=$(now); timeout 120 $MPI $B/all_reduce_perf -b 8 -e 256M -f 4 -n 20 -w 5 -c 0 -g 1 >"$R/nt-2vnodes.txt" 2>&1
  record "nccl-tests 2 vnodes all_reduce 8B-256MB: exit $? wall $(since "$t0") s"
  mps_stop
fi
t0=$(now); timeout 200 $GF bench --virtual-nodes 2 --mps -b 8 -e 256M -f 4 -n 20 -w 5 --no-check --run-dir "$R/o-2vnodes" >"$R/o-2vnodes.txt" 2>&1
record "gpufabric 2 vnodes all_reduce 8B-256MB: exit $? wall $(since "$t0") s | $(grep -m1 'expected' "$R/o-2vnodes.txt" | cut -c1-200)"
python3 benchmarks/side_by_side.py "$R/nt-2vnodes.txt" "$R/o-2vnodes/result.json" >"$R/sbs.md" 2>&1
record "side by side: $(grep -h summary "$R/sbs.md" | tr '\n' ' ' | cut -c1-200)"
timeout 60 $GF doctor "$R/o-2vnodes" >"$R/doctor.txt" 2>&1
record "doctor: exit $? | $(grep -m1 'busbw-expected' "$R/doctor.txt" | cut -c1-200)"
tar -czf "$OUT/one-runs.tgz" -C "$OUT" runs 2>/dev/null && rm -rf "$R"
