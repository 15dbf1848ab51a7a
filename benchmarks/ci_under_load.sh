#!/usr/bin/env bash
# The whole CI (`bash .ci/run` on a fresh clone of main), RUNS times in a row, while CPU hogs compete
# for the cores (issue 23's evidence). Each run clones the newest main, so a session's later commits are
# tested by its later runs.
#   bash benchmarks/ci_under_load.sh [RUNS=10] [HOGS=1] [LEDGER=/tmp/gpufabric-ci-load/ledger.tsv]
# A hog is a Python busy loop, started before the first run and stopped after the last. The ledger gets
# one tab-separated line per run: start (UTC), commit, exit code, minutes, the pytest summary line and
# the 1-minute load average at the end. Logs stay in the ledger's directory, and a red run's pytest
# directories beside them (pytest-<start>-<commit>.tgz).
set -u
RUNS=${1:-10}
HOGS=${2:-1}
LEDGER=${3:-/tmp/gpufabric-ci-load/ledger.tsv}
REPO=${REPO:-$(git rev-parse --show-toplevel)}
DIR=$(dirname "$LEDGER")
mkdir -p "$DIR"
hogs=()
for _ in $(seq "$HOGS"); do
  python3 -c 'while True: pass' &
  hogs+=($!)
done
stop_hogs() { for pid in "${hogs[@]}"; do kill "$pid" 2>/dev/null; done; }
trap stop_hogs EXIT
for run in $(seq "$RUNS"); do
  clone="$DIR/clone"
  rm -rf "$clone"
  git clone -q --branch main "$REPO" "$clone"
  commit=$(git -C "$clone" rev-parse --short HEAD)
  started=$(date -u +%Y-%m-%dT%H:%M)
  t0=$(date +%s)
  (cd "$clone" && timeout 5400 bash .ci/run) >"$DIR/run-$started-$commit.log" 2>&1
  code=$?
  minutes=$(( ($(date +%s) - t0) / 60 ))
  summary=$(grep -E "passed|failed|error" "$DIR/run-$started-$commit.log" | tail -1)
  if [ "$code" -ne 0 ]; then
    # Keep the failed run's test directories (pytest keeps only its last three): the newest basetemp
    # this run's pytest wrote (best effort when two loops run side by side).
    newest=$(ls -td /tmp/pytest-of-*/pytest-[0-9]* 2>/dev/null | head -1)
    [ -n "$newest" ] && tar -czf "$DIR/pytest-$started-$commit.tgz" -C "$(dirname "$newest")" "$(basename "$newest")" 2>/dev/null
  fi
  load=$(cut -d' ' -f1 /proc/loadavg)
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$started" "$commit" "$code" "$minutes" "$summary" "$load" | tee -a "$LEDGER"
done
