"""CLI fuzz: every option of every command, one at a time, given an odd value on top of a cheap, valid
base command line (dry runs, the simulator, small fixtures). Click/typer usage errors and the project's
one-line errors are answers; any other exception is a traceback a user would see, and is reported.

Run in-process with typer's ``CliRunner`` (thousands of cases in a minute); each case is bounded by an
alarm, and ``main`` caps the address space so an unbounded value cannot take the machine down:

    python tests/reliability/cli_fuzz.py [--stride K] [--limit N]   # every Kth case; one line per cause
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import resource
import signal
import sys
import tempfile
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
NCCL_TESTS_LOG = FIXTURES / "nccl_tests" / "constructed_kubectl_ansi_crlf.log"
NCCL_LOG = FIXTURES / "nccl_logs" / "nccl352_socket_lo_2.4.8.log"
CASE_SECONDS = 20


class CaseTimeout(Exception):
    pass


def odd_values(work: Path) -> list[str]:
    """Values that have broken parsers before: empty, signs, huge numbers, non-numbers, paths of every
    kind (directory, device, missing, non-UTF-8 file), separators alone, control and bidi characters.
    Every directory named is inside ``work`` (``..`` from its ``cwd`` too): an output option given a
    directory writes there (``compare --plot DIR``), never into ``/`` or ``/tmp``."""
    return [
        "", " ", "0", "-1", "1e309", "nan", "inf", "-inf", "0x10", "9" * 5000, "x" * 5000, "1.5",
        "é\u202eabc", "-", str(work), "/dev/null", str(work / "missing.yaml"), str(work / "bad.bin"),
        "a=b=c", ",", ",,", "=", "@", "@" + str(work / "bad.bin"), "@/nonexistent", ":", "1:2:3", "a:b",
        "%s%n", "${HOME}", "\t", "-x", "--", "[", "{", "!!int x", "*", "..",
    ]  # fmt: skip


def base_lines(work: Path) -> dict[str, list[str]]:
    """A cheap, valid command line per command: the fuzz replaces or adds one option at a time."""
    task = work / "task.yaml"
    return {
        "bench": ["bench", "--on", "mpirun", "--hosts", "a,b", "--dry-run"],
        "compare": ["compare", str(NCCL_TESTS_LOG), str(NCCL_TESTS_LOG)],
        "report": ["report", str(NCCL_TESTS_LOG), "--out", str(work / "r.html")],
        "show": ["show", str(NCCL_TESTS_LOG)],
        "catalog": ["catalog", "show", "p4d.24xlarge"],
        "plan": ["plan", "-t", "p4d.24xlarge"],
        "doctor": ["doctor", str(NCCL_LOG)],
        "launch": ["launch", str(task), "--on", "mpirun", "--hosts", "a,b", "--dry-run"],
        "nodes": ["nodes", "--on", "slurm"],
        "isolate": ["isolate", "--simulate", "--nodes", "8"],
        "train-bench": ["train-bench", "--show", str(work / "missing.json")],
        "tune": ["tune", "--on", "mpirun", "--hosts", "a,b", "--mpirun", str(work / "no-mpirun")],
    }


def cases(work: Path) -> Iterator[list[str]]:
    import typer

    from gpufabric.cli.app import app

    group: Any = typer.main.get_command(app)
    values = odd_values(work)
    for name, base in base_lines(work).items():
        command = group.commands[name]
        for param in command.params:
            opts = list(getattr(param, "opts", []) or [])
            if not opts or getattr(param, "is_flag", False) or opts[0] in ("--help", "-h"):
                continue
            if not opts[0].startswith("-"):  # a positional argument: the odd value replaces the first
                for value in values:
                    yield [name, value, *base[2:]] if not base[1].startswith("-") else [*base, value]
                continue
            for value in values:
                yield [*base, opts[0], value]


def run_case(args: list[str]) -> str | None:
    """None when the CLI answered (any exit code, through ``main``'s error handling, as a user sees it);
    else the escaped exception, where it was raised and its message."""
    from gpufabric.cli.app import main

    def alarm(_signum: int, _frame: object) -> None:
        raise CaseTimeout(f"took over {CASE_SECONDS} s")

    saved_argv = sys.argv
    sys.argv = ["gpufabric", *args]
    signal.signal(signal.SIGALRM, alarm)
    signal.alarm(CASE_SECONDS)
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            main()
    except SystemExit:
        return None
    except BaseException as exc:
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if "gpufabric" in f.filename]
        where = f"{Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else "?"
        return f"{type(exc).__name__} at {where}: {' '.join(str(exc).split())[:160]}"
    finally:
        signal.alarm(0)
        sys.argv = saved_argv
    return None


def prepare(work: Path) -> None:
    (work / "task.yaml").write_text("name: fuzz\nnum_nodes: 2\nrun: |\n  echo hi\n", encoding="utf-8")
    (work / "bad.bin").write_bytes(b"\xff\xfe\x00bad")


def main() -> int:
    limit = int(sys.argv[sys.argv.index("--limit") + 1]) if "--limit" in sys.argv else None
    stride = int(sys.argv[sys.argv.index("--stride") + 1]) if "--stride" in sys.argv else 1
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
    failures: dict[str, list[str]] = {}
    total = 0
    with tempfile.TemporaryDirectory(prefix="gpufabric-cli-fuzz-") as tmp:
        work = Path(tmp)
        prepare(work)
        (work / "cwd").mkdir()
        os.chdir(work / "cwd")
        for number, args in enumerate(cases(work)):
            if limit is not None and total >= limit:
                break
            if number % stride:
                continue
            total += 1
            problem = run_case(args)
            if problem is not None:
                failures.setdefault(problem.split(" | ")[0][:120], []).append(json.dumps(args)[:300])
    for cause, examples in failures.items():
        print(f"{len(examples)} x {cause}\n    e.g. {examples[0]}")
    print(json.dumps({"cases": total, "tracebacks": sum(len(v) for v in failures.values()),
                      "causes": len(failures)}))  # fmt: skip
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
