#!/usr/bin/env bash
# The timing-sensitive tests, N times in a row, while CPU hogs compete for the cores (issue 23).
#   bash benchmarks/flake_under_load.sh [RUNS=10] [HOGS=2]        from the repository root
# Each run is one pytest invocation under `timeout`; a hog is a Python busy loop (stress-ng is not
# installed here), started before the first run and stopped (by its pid) after the last.
# Prints one line per run (exit code, passed/failed counts, seconds, load average) and a summary.
set -u
RUNS=${1:-10}
HOGS=${2:-2}
PY=${PY:-.venv/bin/python}
export PYTHONPATH=$PWD/src${PYTHONPATH:+:$PYTHONPATH}  # this checkout, not an installed copy
LOG_DIR=${LOG_DIR:-/tmp/gpufabric-flake}
mkdir -p "$LOG_DIR"
TESTS=(
  tests/reliability/test_faults_gloo.py
  tests/reliability/test_slow_fault_units.py
  tests/reliability/test_watchdog_units.py
  tests/reliability/test_fault_marking.py
  tests/reliability/test_signals.py
  tests/analysis/isolate/test_real_isolate.py
  tests/engines/torch/test_engine_gloo.py::test_adaptive_mode_stops_when_batches_agree
  tests/launch/test_launch_failures.py
  tests/launch/test_local_launcher.py::test_a_failing_rank_stops_the_others_and_is_named
  tests/engines/nccl_tests/test_nccl_tests_output_check.py::test_another_ranks_chunk_in_the_middle_of_a_rank0_row_is_kept_out
  tests/launch/test_slurm_pending_and_refusals.py::test_slurm_conf_naming_no_file_fails_at_once
)
hogs=()
for _ in $(seq "$HOGS"); do
  "$PY" -c 'while True: pass' &
  hogs+=($!)
done
stop_hogs() { for pid in "${hogs[@]}"; do kill "$pid" 2>/dev/null; done; }
trap stop_hogs EXIT
green=0
for run in $(seq "$RUNS"); do
  start=$(date +%s)
  timeout 1200 "$PY" -m pytest -q -p no:cacheprovider "${TESTS[@]}" >"$LOG_DIR/run$run.log" 2>&1
  code=$?
  took=$(( $(date +%s) - start ))
  [ "$code" = 0 ] && green=$((green + 1))
  echo "run $run: exit $code, $(tail -1 "$LOG_DIR/run$run.log"), ${took} s, load $(cut -d' ' -f1-3 /proc/loadavg)"
done
echo "SUMMARY: $green of $RUNS runs green with $HOGS CPU hog(s) beside them; logs in $LOG_DIR"
