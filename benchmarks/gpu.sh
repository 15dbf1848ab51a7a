#!/usr/bin/env bash
# The one GPU measurement harness: named scenarios (benchmarks/scenarios/NAME.sh) after ONE set-up of the
# lent GPU machine (our wheels, PYTHONPATH, torch's NCCL; nccl-tests built once when a scenario needs it),
# and ONE summary, printed last, of every scenario's lines (each prefixed with its name).
#   benchmarks/gpu.sh --list                       # the scenarios and what each measures
#   benchmarks/gpu.sh SCENARIO[:ARG] [SCENARIO[:ARG] ...]
#   benchmarks/gpu.sh vnodes-expect                # e.g. what one GPU proves (~6 min on nvidia-h100-x1)
#   benchmarks/gpu.sh expect:model small-repeat    # two scenarios, one set-up, one build of nccl-tests
# ARG is the scenario's own argument (its first positional parameter), e.g. direct:full, suite:multi.
# Needs .whl/ (wheels for the image's Python) and, for scenarios that build it, .gpurun/nccl-tests (the
# NVIDIA/nccl-tests source), both carried. With one scenario its files lie in $OUT as it writes them;
# with several, each scenario writes under $OUT/NAME/ (NAME-ARG/ with an argument) and that folder comes
# back as $OUT/NAME.tgz or NAME-ARG.tgz (the device returns at most 8 files). $OUT/summary.txt holds the
# summary lines of all of them.
set -u
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# GPU_SCENARIOS: another folder of scenarios (the CPU test of this harness uses one).
SCENARIOS="${GPU_SCENARIOS:-$HERE/scenarios}"

# scenario_file NAME: the file of a scenario; NAME.sh, or gpu_NAME.sh as an old script moved in unchanged.
scenario_file() {
  if [ -f "$SCENARIOS/$1.sh" ]; then echo "$SCENARIOS/$1.sh"
  elif [ -f "$SCENARIOS/gpu_$1.sh" ]; then echo "$SCENARIOS/gpu_$1.sh"
  else return 1; fi
}

scenario_names() {
  local f name
  for f in "$SCENARIOS"/*.sh; do
    name=$(basename "$f" .sh); echo "${name#gpu_}"
  done | sort
}

# The first comment line after the shebang says what a scenario measures.
list_scenarios() {
  local name line
  for name in $(scenario_names); do
    line=$(sed -n '2,5{/^# /{s/^# //p;q}}' "$(scenario_file "$name")")
    printf '%-16s %s\n' "$name" "$line"
  done
}

if [ $# -eq 0 ] || [ "$1" = --list ] || [ "$1" = -h ] || [ "$1" = --help ]; then
  sed -n '2,13{s/^# \{0,1\}//p}' "$0"
  echo; echo "scenarios:"; list_scenarios
  [ $# -eq 0 ] && exit 2 || exit 0
fi

# Every name is checked before the machine is touched: an unknown one stops the run in one line.
for spec in "$@"; do
  name="${spec%%:*}"
  if ! scenario_file "$name" >/dev/null; then
    echo "Error: unknown scenario '$name' for benchmarks/gpu.sh; choose from: $(scenario_names | tr '\n' ' ')(see benchmarks/gpu.sh --list)" >&2
    exit 2
  fi
done

OUT="${OUT:-/tmp/gpufabric-out}"; mkdir -p "$OUT"
ROOT="$OUT"
export GPU_HARNESS=1 SUMMARY_FILE="$ROOT/summary.txt"
LOG="$ROOT/harness.log"
# shellcheck source=benchmarks/gpu_lib.sh
source "$HERE/gpu_lib.sh"
: > "$LOG"; : > "$SUMMARY_FILE"
say "host $(hostname) $(date -u +%FT%TZ): $(timeout 30 nvidia-smi -L 2>/dev/null | wc -l) GPUs, $(timeout 30 nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1); scenarios: $*"
gpu_python_setup
for spec in "$@"; do
  if grep -q build_nccl_tests "$(scenario_file "${spec%%:*}")"; then
    # Built outside $OUT (a scenario's build_nccl_tests copies the log into its own folder); its tail
    # goes into harness.log.
    OUT=/tmp/gpufabric-build; mkdir -p "$OUT"; build_nccl_tests; rc=$?; OUT="$ROOT"
    tail -20 "$NT_BUILD_LOG" >> "$LOG"
    record "nccl-tests build (once, before any timing): exit $rc ($(ls $NT/build/*_perf 2>/dev/null | wc -l) binaries)"
    break
  fi
done

for spec in "$@"; do
  name="${spec%%:*}"; arg=""; [ "$spec" != "$name" ] && arg="${spec#*:}"
  file=$(scenario_file "$name")
  # With several scenarios each gets a folder of its own, named with its argument too: `train:predict
  # train:tests` once wrote both into $OUT/train/, and the second's clean-up took the first's raw runs.
  folder="$name${arg:+-${arg//[^A-Za-z0-9_.-]/_}}"
  scenario_out="$ROOT"; [ $# -gt 1 ] && scenario_out="$ROOT/$folder"
  mkdir -p "$scenario_out"
  say "scenario $name${arg:+ ($arg)}"
  t0=$(now)
  # A subshell per scenario: its variables, `cd`, `exit` and `set` stay its own. Sourced, not executed,
  # so a moved-in script's `source "$(dirname "$0")/gpu_lib.sh"` finds this directory's gpu_lib.sh.
  (
    export OUT="$scenario_out" GPU_SCENARIO="$name"
    LOG="$OUT/$name.log"; : > "$LOG"
    if [ -n "$arg" ]; then set -- "$arg"; else set --; fi
    # shellcheck disable=SC1090
    source "$file"
  )
  rc=$?
  GPU_SCENARIO="$name" record "scenario exit $rc, wall $(since "$t0") s"
  if [ $# -gt 1 ]; then
    tar -czf "$ROOT/$folder.tgz" -C "$ROOT" "$folder" 2>/dev/null && rm -rf "${ROOT:?}/$folder"
  fi
done
echo "================ summary"
cat "$SUMMARY_FILE"
