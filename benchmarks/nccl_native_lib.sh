# shellcheck shell=bash
# Shared by benchmarks/scenarios/gpu_nccl_native.sh and benchmarks/scenarios/nccl231.sh (issue 41): a
# 4-process nccl-tests job on a chosen NCCL, and RAS's view of it (our `watch` and raw socket dumps), clean
# and with one rank stopped. Needs gpu_lib.sh sourced first and $C (captures folder), $B (nccl-tests build).
# mpi4 SECONDS LIBDIR ARGS...: nccl-tests' all_reduce over 4 processes (one GPU each) on the NCCL in
# LIBDIR, under a time limit; the NCCL_* variables this script uses reach the ranks when set (mpirun -x).
mpi4() {
  local limit=$1 libdir=$2 v; shift 2
  local xs=(-x LD_LIBRARY_PATH)
  for v in NCCL_NVLS_ENABLE NCCL_DEBUG NCCL_RUN_DIAGNOSTICS NCCL_RUN_RAS_DIAGNOSTICS NCCL_P2P_DISABLE NCCL_P2P_LEVEL \
           NCCL_DEBUG_SUBSYS NCCL_TOPO_FILE NCCL_TOPO_DUMP_FILE \
           NCCL_PROFILER_PLUGIN NCCL_INSPECTOR_ENABLE NCCL_INSPECTOR_DUMP_DIR NCCL_INSPECTOR_PROM_DUMP \
           NCCL_INSPECTOR_DUMP_THREAD_INTERVAL_MICROSECONDS; do
    [ -n "${!v+x}" ] && xs+=(-x "$v")
  done
  LD_LIBRARY_PATH="$libdir:${LD_LIBRARY_PATH}" timeout "$limit" mpirun --allow-run-as-root -np 4 "${xs[@]}" \
    "$B/all_reduce_perf" -g 1 -c 0 "$@"
}
export NCCL_DEBUG=WARN
missing_pid() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(any(m.get('pid')==int(sys.argv[2]) for c in r['status']['communicators'] for m in c['missing']) or any(p['pid']==int(sys.argv[2]) for p in r['status']['incomplete_processes']+r['status']['dead_processes']))" "$1" "$2" 2>/dev/null; }
# raw FILE COMMANDS...: RAS's bytes, retried when the connection landed on the stopped process's socket
# (every rank listens on the port with SO_REUSEPORT, so a connection may reach the stopped one).
raw() { local _try; for _try in 1 2 3; do timeout 60 python3 benchmarks/ras_raw.py localhost:28028 "$@" >>"$LOG" 2>&1; [ -s "$1" ] && return; done; }

# ras_one NAME LIBDIR: one long job, captured clean, then with its last rank stopped (and, on 2.28.9 unless
# RAS_DEAD_WAIT=0, 66 s later when RAS declares it dead).
ras_one() {
  local name=$1 libdir=$2 i t0 pid ranks named=""
  mpi4 900 "$libdir" -b 256M -e 256M -n 1000000 -w 5 >"$C/job-$name.txt" 2>&1 &
  local job=$!
  for i in $(seq 60); do timeout 20 $GF watch --format json >"$C/ras-$name-clean-watch.json" 2>"$C/ras-$name-clean-watch.err" && break; sleep 1; done
  record "RAS $name clean: watch exit $? after ${i} tries | $(python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['status']; print(r['nccl_version'], r['format'], len(r['communicators']), 'comm(s)', sum(len(c['missing']) for c in r['communicators']), 'missing')" "$C/ras-$name-clean-watch.json" 2>&1)"
  timeout 30 $GF watch --raw-format text --format json >"$C/ras-$name-clean-watch-text.json" 2>>"$LOG"
  timeout 30 $GF watch >"$C/ras-$name-clean-watch-table.txt" 2>>"$LOG"
  raw "$C/ras-$name-clean-json.raw" "CLIENT PROTOCOL 2" "TIMEOUT 5" "SET FORMAT json" "VERBOSE STATUS"
  raw "$C/ras-$name-clean-text.raw" "CLIENT PROTOCOL 2" "TIMEOUT 5" "VERBOSE STATUS"
  if [ "$name" = nccl231 ]; then
    timeout 60 $GF watch --diagnostics --format json >"$C/ras-$name-diagnostics-watch.json" 2>>"$LOG"
    record "RAS $name on-demand diagnostics: exit $? | $(grep -c 'NCCL DIAG' "$C/ras-$name-diagnostics-watch.json") DIAG lines"
    raw "$C/ras-$name-diagnostics.raw" "CLIENT PROTOCOL 2" "DIAGNOSTICS"
  fi
  ranks=$(pgrep -x all_reduce_perf)  # this job's 4 rank processes, ended by their ids below
  pid=$(echo "$ranks" | tail -1)
  kill -STOP "$pid"; t0=$(now)
  for i in $(seq 12); do  # each try ends within 1 + 2 + 5 + 1 s (connect, RAS's wait, RAS's extra, slack)
    timeout 30 $GF watch --format json --timeout 2 --connect-timeout 1 --hostfile "$C/suspects-$name.hosts" >"$C/ras-$name-stopped-try$i.json" 2>"$C/ras-$name-stopped-try$i.err"
    if [ "$(missing_pid "$C/ras-$name-stopped-try$i.json" "$pid")" = True ]; then named=$(since "$t0"); break; fi
  done
  record "RAS $name, pid $pid stopped: named after ${named:-never (12 tries)} s, try $i | $(head -c 160 "$C/ras-$name-stopped-try$i.err")"
  raw "$C/ras-$name-stopped-json.raw" "CLIENT PROTOCOL 2" "TIMEOUT 5" "SET FORMAT json" "VERBOSE STATUS"
  raw "$C/ras-$name-stopped-text.raw" "CLIENT PROTOCOL 2" "TIMEOUT 5" "VERBOSE STATUS"
  # the hand-off to isolate (the try that named the rank wrote the suspects and healthy controls)
  record "RAS $name stopped, hand-off: $(python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(r['isolate_command'], [s['host'] for s in r['accusation']['suspects']])" "$C/ras-$name-stopped-try$i.json" 2>&1 | cut -c1-200)"
  if [ "$name" = nccl2289 ] && [ "${RAS_DEAD_WAIT:-1}" = 1 ]; then  # RAS declares a process dead after 60 s unreachable
    sleep "$(python3 -c "print(max(0, 66 - $(since "$t0")))")"
    raw "$C/ras-$name-dead-text.raw" "CLIENT PROTOCOL 2" "TIMEOUT 5" "VERBOSE STATUS"
    timeout 30 $GF watch --format json --hostfile "$C/suspects.hosts" >"$C/ras-$name-dead-watch.json" 2>>"$LOG"
    record "RAS $name dead: watch exit $? | $(python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(r['isolate_command'], [s['host'] for s in r['accusation']['suspects']])" "$C/ras-$name-dead-watch.json" 2>&1)"
  fi
  kill -CONT "$pid"; kill "$job" 2>/dev/null; sleep 2
  for pid in $ranks; do kill "$pid" 2>/dev/null; done; wait "$job" 2>/dev/null
}

