#!/usr/bin/env bash
# Several GPUs (NVLink): the direct engine beside nccl-tests, every collective, small sizes, spread, A/B, tune (issue 22).
#   benchmarks/gpu.sh multi              # ~5 min on 4 GPUs; needs .whl/ and .gpurun/nccl-tests carried
#   benchmarks/gpu.sh multi:collectives  # ~3 min: every collective 1 MB - 1 GB only, both engines, and
#                                        # the direct engine's gpu tests
# nccl-tests runs one process per GPU under mpirun (`-g 1`, the process model of our engine) and, for
# the anchors' shape, one process driving every GPU (`-g N`). Same sizes and iterations on both sides.
# What comes back: summary.txt, multi.log, sbs.md, runs-multi.tgz. (Was gpu_multi.sh.)
MODE="${1:-full}"
G=$(timeout 30 nvidia-smi -L | wc -l)
timeout 30 nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1 | tee -a "$LOG"
timeout 30 nvidia-smi topo -m >>"$LOG" 2>&1
say "host $(hostname) $(date -u +%FT%TZ), $G GPUs"
# Built first, not beside the measurements: 16 compilers sharing the host's cores with our ranks is a
# confounder nccl-tests' own runs (after the build) did not have.
build_nccl_tests
R="$OUT/runs"; mkdir -p "$R"
SBS="$OUT/sbs.md"; : > "$SBS"
ours() { timeout "$1" $GF bench --engine nccl --ranks "$G" "${@:2}" 2>>"$LOG"; }

if [ "$MODE" = full ]; then
say "ours: all_reduce 8 B - 2 GB, -n 20 -w 5, exact mode (--batches 1), --check, whole-command time"
t0=$(now); ours 150 -b 8 -e 2G -f 2 -n 20 -w 5 --batches 1 --run-dir "$R/o-ar" >"$R/o-ar.txt"; rc=$?
record "ours all_reduce 8B-2GB --check: exit $rc, wall $(since "$t0") s"
fi
say "ours: every collective 1 MB - 1 GB, -f 4 -n 20 -w 5 --batches 1 --no-check"
ours 240 -c all,gather,scatter,alltoallv -b 1M -e 1G -f 4 -n 20 -w 5 --batches 1 --no-check --run-dir "$R/o-c" >/dev/null
record "ours every collective 1MB-1GB: exit $?"
if [ "$MODE" = collectives ]; then
  say "ours, torch engine: every collective torch.distributed has, 1 MB - 1 GB, same options"
  timeout 240 $GF bench --engine torch --ranks "$G" -c all -b 1M -e 1G -f 4 -n 20 -w 5 --batches 1 --no-check --run-dir "$R/o-ct" >/dev/null 2>>"$LOG"
  record "ours (torch engine) every collective 1MB-1GB: exit $?"
  say "pytest -m gpu: the direct engine and the torch engine"
  timeout 240 python3 -m pytest -m gpu -q -p no:cacheprovider -o addopts="-ra" tests/engines/nccl/test_gpu_direct.py tests/bench/test_gpu_engine.py \
    >"$R/pytest-direct.log" 2>&1
  record "pytest -m gpu (direct, torch engine): exit $? | $(tail -1 "$R/pytest-direct.log")"
else
say "ours: small messages 8 B - 64 KB, -n 1000 -w 50, eager and graph"
ours 120 -b 8 -e 64K -f 2 -n 1000 -w 50 --batches 3 --no-check --run-dir "$R/o-se" >/dev/null; e=$?
ours 120 -b 8 -e 64K -f 2 -n 1000 -w 50 --batches 3 --no-check --graph --run-dir "$R/o-sg" >/dev/null
record "ours small eager/graph: exit $e/$?"
fi

B=$NT/build
MPI="mpirun --allow-run-as-root -np $G -x NCCL_NVLS_ENABLE=0 -x LD_LIBRARY_PATH"
COLLS="all_reduce all_gather reduce_scatter alltoall broadcast reduce sendrecv gather scatter alltoallv"
if [ -x "$B/all_reduce_perf" ]; then
  for c in $COLLS; do
    timeout 90 $MPI $B/${c}_perf -b 1M -e 1G -f 4 -n 20 -w 5 -c 0 -g 1 >"$R/nt-c-$c.txt" 2>&1
  done
  { echo "## every collective, direct engine"
    for c in $COLLS; do python3 benchmarks/side_by_side.py "$R/nt-c-$c.txt" "$R/o-c/result.json" --collective $c; done
    if [ -f "$R/o-ct/result.json" ]; then
      echo "## every collective, torch engine"
      for c in $COLLS; do python3 benchmarks/side_by_side.py "$R/nt-c-$c.txt" "$R/o-ct/result.json" --collective $c; done
    fi
  } >>"$SBS" 2>&1
fi
if [ -x "$B/all_reduce_perf" ] && [ "$MODE" = full ]; then
  say "nccl-tests: all_reduce 8 B - 2 GB, -c 1, one process per GPU, whole-command time"
  t0=$(now); timeout 120 $MPI $B/all_reduce_perf -b 8 -e 2G -f 2 -n 20 -w 5 -c 1 -g 1 >"$R/nt-ar.txt" 2>&1; rc=$?
  record "nccl-tests all_reduce 8B-2GB -np $G -c 1: exit $rc, wall $(since "$t0") s"
  t0=$(now); timeout 120 $B/all_reduce_perf -b 8 -e 2G -f 2 -n 20 -w 5 -c 1 -g "$G" >"$R/nt-ar-g.txt" 2>&1; rc=$?
  record "nccl-tests all_reduce 8B-2GB -g $G (one process): exit $rc, wall $(since "$t0") s"
  timeout 60 $MPI $B/all_reduce_perf -b 8 -e 64K -f 2 -n 1000 -w 50 -c 0 -g 1 >"$R/nt-se.txt" 2>&1
  timeout 60 $MPI $B/all_reduce_perf -b 8 -e 64K -f 2 -n 1000 -w 50 -c 0 -g 1 -G 1 >"$R/nt-sg.txt" 2>&1
  say "spread: 5 separate runs at 1 MB and 64 MB, each tool"
  for _ in 1 2 3 4 5; do
    timeout 60 $MPI $B/all_reduce_perf -b 1M -e 64M -f 64 -n 20 -w 5 -c 0 -g 1 2>&1 | grep -E '^ +[0-9]' >>"$R/nt-spread.txt"
    ours 60 -b 1M -e 64M -f 64 -n 20 -w 5 --batches 1 --no-check --format csv | grep -v '^#' >>"$R/o-spread.csv"
  done
  { echo "### all_reduce 8 B - 2 GB, one process per GPU"; python3 benchmarks/side_by_side.py "$R/nt-ar.txt" "$R/o-ar/result.json"
    echo "### all_reduce 8 B - 2 GB, nccl-tests -g $G (one process)"; python3 benchmarks/side_by_side.py "$R/nt-ar-g.txt" "$R/o-ar/result.json"
    echo "### small eager"; python3 benchmarks/side_by_side.py "$R/nt-se.txt" "$R/o-se/result.json"
    echo "### small graph"; python3 benchmarks/side_by_side.py "$R/nt-sg.txt" "$R/o-sg/result.json"
    echo "### spread nccl-tests"; cat "$R/nt-spread.txt"; echo "### spread gpufabric"; cat "$R/o-spread.csv"
  } >>"$SBS" 2>&1
fi
record "side by side: $(grep -h summary "$SBS" | cut -c1-150 | tr '\n' ' ')"

if [ "$MODE" = full ]; then
say "bench --ab -f 2 up to 256 MB (fabric on = NVLink, off = sockets)"
timeout 200 $GF bench --ab --ranks "$G" -b 1M -e 256M -f 2 -n 5 --rounds 2 --run-dir "$R/ab" >"$R/ab.txt" 2>>"$LOG"
record "bench --ab: exit $? | $(grep -m1 -i 'speed\|verdict' "$R/ab.txt" | cut -c1-160)"
say "tune on the socket path"
timeout 200 $GF tune --ranks "$G" --size 64M -b 64M -e 64M --budget 6 --repeats 2 -n 3 --batches 2 \
  --run-dir "$R/tune" >"$R/tune.txt" 2>>"$LOG"
record "tune: exit $? | $(grep -m1 -i 'best\|keep\|export' "$R/tune.txt" | cut -c1-160)"
say "virtual nodes across the GPUs: $G nodes of 1 GPU, then 2 nodes of $((G / 2)) GPUs"
ours 150 --virtual-nodes "$G" -b 1M -e 256M -f 4 -n 10 -w 3 --batches 1 --run-dir "$R/vn$G" >"$R/vn$G.txt"; rc=$?
record "$G virtual nodes: exit $rc | $(grep -E '^ +268435456' "$R/vn$G.txt" | head -1 | tr -s ' ' | cut -c1-120)"
ours 150 --virtual-nodes 2 -b 1M -e 256M -f 4 -n 10 -w 3 --batches 1 --run-dir "$R/vn2" >"$R/vn2.txt"; rc=$?
record "2 virtual nodes: exit $rc | $(grep -E '^ +268435456' "$R/vn2.txt" | head -1 | tr -s ' ' | cut -c1-120)"
timeout 60 $GF doctor "$R/vn2" >"$R/doctor-vn2.txt" 2>&1
record "doctor on 2 virtual nodes: exit $? | $(grep -m1 -i 'between\|NVLink\|socket' "$R/doctor-vn2.txt" | cut -c1-160)"
fi
tar -czf "$OUT/runs-multi.tgz" -C "$OUT" runs nccl-tests-build.log 2>/dev/null && rm -rf "$R" "$OUT/nccl-tests-build.log"
