"""Time a command as a user sees it: start to first result row, last row to exit, and the whole command.

Runs ``COMMAND ...`` with its stdout and stderr read line by line (unbuffered), stamps each line on
arrival, and prints one JSON line: ``wall_s`` (start to exit), ``first_row_s`` (start to the first row),
``last_row_to_exit_s``, the row count, and the start and end in seconds since the epoch. A row is a table
line of nccl-tests' layout, which ``gpufabric bench`` prints too: it starts with the size in bytes, then
the element count (two integers), then the type. The command's output is kept in ``--log`` when given.
Used by benchmarks/gpu.sh startup:

    python benchmarks/first_row.py --log nt.txt -- mpirun -np 4 all_reduce_perf -b 8 -e 128M -f 2 -g 1
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time

ROW = re.compile(rb"^\s*\d+\s+\d+\s+[a-z]\w*\s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log", help="keep the command's output (stdout and stderr, interleaved) here")
    parser.add_argument("--label", default="", help="a name for this run in the JSON line")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND ARGS...")
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command after --")
    log = open(args.log, "wb") if args.log else None  # noqa: SIM115  # closed below, after the command
    start_epoch, start = time.time(), time.perf_counter()
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env) as proc:
        assert proc.stdout is not None
        first = last = None
        rows = 0
        for line in proc.stdout:
            stamp = time.perf_counter() - start
            if log is not None:
                log.write(line)
            if ROW.match(line):
                rows += 1
                first = stamp if first is None else first
                last = stamp
        code = proc.wait()
    wall = time.perf_counter() - start
    if log is not None:
        log.close()
    result = {
        "label": args.label,
        "exit": code,
        "wall_s": round(wall, 3),
        "first_row_s": None if first is None else round(first, 3),
        "last_row_to_exit_s": None if last is None else round(wall - last, 3),
        "rows": rows,
        "start_epoch": round(start_epoch, 3),  # to line up with a result's phases (RunMetadata.phases)
        "end_epoch": round(start_epoch + wall, 3),
    }
    print(json.dumps(result))
    sys.exit(0 if code == 0 and rows else 1)


if __name__ == "__main__":
    main()
