#!/usr/bin/env bash
# Every mode on 2-4 virtual nodes of one GPU: --ab, tune, train-bench, launch, self-test, SIGTERM, isolate, doctor.
# Issue 16 item 4, beyond the bench suite: the self-test with the catalog's figures, SIGTERM to a run on
# NCCL ranks (no rank left), isolate with one slowed rank and with none, and doctor on the real logs.
#   benchmarks/gpu.sh vnodes-modes      # ~6 min on one H100; needs .whl/ carried
#   ISOLATE_DELAY_MS=50 benchmarks/gpu.sh vnodes-modes   # the slowed rank's delay per call (default 5 ms)
# What comes back: summary.txt, vnodes-modes.log, vnode-runs.tgz. (Was gpu_vnodes_suite.sh; with
# ISOLATE_DELAY_MS=50, `memory check vnodes-modes` covers what gpu_final.sh measured.)
R="$OUT/runs"; mkdir -p "$R"

say "bench --ab on 2 virtual nodes (MPS): the across-nodes A/B (net plugin vs NCCL_NET=Socket)"
timeout 240 $GF bench --ab --virtual-nodes 2 --mps --rounds 2 -b 1M -e 64M -f 8 -n 5 -w 2 --batches 3 \
  --run-dir "$R/ab" >"$R/ab.txt" 2>"$R/ab.err"
record "bench --ab --virtual-nodes 2: exit $? | $(grep -m1 -iE 'verdict|fabric|all_reduce:' "$R/ab.txt" | cut -c1-160) | err: $(tail -1 "$R/ab.err" | cut -c1-200)"

say "tune on 2 virtual nodes"
timeout 240 $GF tune --virtual-nodes 2 --mps --size 64M --budget 4 -n 3 -w 1 --batches 3 --format json \
  --run-dir "$R/tune" >"$R/tune.json" 2>"$R/tune.err"
record "tune --virtual-nodes 2: exit $? | $(python3 -c "import json,sys; d=json.load(open('$R/tune.json')); print('jobs', d.get('jobs'), 'default', round(d['default']['busbw_gbs'],2), 'best', d.get('best',{}).get('env'))" 2>&1 | tail -1 | cut -c1-200)"

say "train-bench on 2 virtual nodes (torch's NCCL, DDP, tiny model)"
timeout 240 $GF train-bench --virtual-nodes 2 --mps --model tiny --steps 5 --warmup-steps 2 --no-scaling \
  --run-dir "$R/train" >"$R/train.txt" 2>"$R/train.err"
record "train-bench --virtual-nodes 2: exit $? | $(grep -m2 -iE 'samples/s|busbw' "$R/train.txt" | tr '\n' ' ' | cut -c1-200) | err: $(tail -1 "$R/train.err" | cut -c1-160)"

say "launch a 2-node task on virtual nodes"
cat > "$R/task.yaml" <<'T'
name: vnode-env
num_nodes: 2
run: |
  echo "node $SKYPILOT_NODE_RANK of $SKYPILOT_NUM_NODES: NCCL_HOSTID=$NCCL_HOSTID CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES"
T
timeout 120 $GF launch "$R/task.yaml" --on local --virtual-nodes --mps --workdir "$R/launch" >"$R/launch.txt" 2>&1
record "launch --virtual-nodes: exit $? | $(grep -o 'node [0-9] of 2: NCCL_HOSTID=[^ ]*' "$R/launch.txt" | sort -u | tr '\n' ' ')"

say "self-test with the catalog's expected figures (p4d.24xlarge named: this box has no EFA)"
timeout 240 $GF bench --self-test --instance-type p4d.24xlarge -b 1M -e 64M -f 8 -n 5 --batches 1 \
  --run-dir "$R/selftest" >"$R/selftest.txt" 2>"$R/selftest.err"
record "bench --self-test: exit $? | $(grep -iE 'catalog|expected|cannot prove' "$R/selftest.err" "$R/selftest.txt" | head -3 | tr '\n' ' ' | cut -c1-300)"

say "SIGTERM to a bench on NCCL ranks (2 virtual nodes): exit 143, no rank left"
timeout 120 $GF bench --engine nccl --virtual-nodes 2 --mps -b 8 -e 1G -f 2 -n 50 --run-dir "$R/term" >/dev/null 2>"$R/term.err" &
P=$!; sleep 12; kill -TERM $P; wait $P; rc=$?; sleep 2
left=$(pgrep -f "engines.nccl.rank" | wc -l)
record "SIGTERM mid-sweep: exit $rc, ranks left $left, partial rows $(grep -c '"record":"row"' "$R/term/result.jsonl" 2>/dev/null)"

say "isolate --nodes 4 on virtual nodes with one slowed rank (GPUFABRIC_FAULT=slow:rank=2, ${ISOLATE_DELAY_MS:-5} ms per call)"
GPUFABRIC_FAULT="slow:rank=2:delay_ms=${ISOLATE_DELAY_MS:-5}" timeout 300 $GF isolate --nodes 4 --virtual-nodes --mps --run-dir "$R/isolate" \
  >"$R/isolate.txt" 2>"$R/isolate.err"
record "isolate slowed rank 2: exit $? | $(grep -m2 -iE 'convict|slow|suspect|node' "$R/isolate.txt" | tr '\n' ' ' | cut -c1-240) | err: $(tail -1 "$R/isolate.err" | cut -c1-160)"
timeout 300 $GF isolate --nodes 4 --virtual-nodes --mps --run-dir "$R/isolate-healthy" >"$R/isolate-healthy.txt" 2>"$R/isolate-healthy.err"
record "isolate healthy: exit $? | $(grep -m2 -iE 'convict|no .*found|proven|healthy|warn' "$R/isolate-healthy.txt" "$R/isolate-healthy.err" | tr '\n' ' ' | cut -c1-240)"

say "doctor on the real logs of the runs above"
for d in ab/on ab tune train selftest; do
  [ -d "$R/$d" ] || continue
  timeout 60 $GF doctor "$R/$d" >"$R/doctor-${d//\//-}.txt" 2>&1
  record "doctor $d: exit $? | $(grep -m2 -iE 'verdict|virtual nodes|FAIL|PASS|WARN' "$R/doctor-${d//\//-}.txt" | tr '\n' ' ' | cut -c1-200)"
done
tar -czf "$OUT/vnode-runs.tgz" -C "$OUT" runs 2>/dev/null && rm -rf "$R"
