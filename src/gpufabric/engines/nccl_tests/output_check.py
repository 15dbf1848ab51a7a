"""Does nccl-tests' output describe the job that was launched? Compare the table with the command line.

Why this exists: nccl-tests built without ``MPI=1`` and started by ``mpirun -np 16`` runs sixteen
independent 1-rank jobs, each printing a valid table and exiting 0; rank 0's table then reports one GPU
talking to itself as the cluster's bandwidth. A wrapper script that ignores our flags, or a stale output
file, is just as quiet. So the table's rank count, collective, type, reduction, root and sizes are checked
against what the command asked for, and a table that stopped early is named by its missing sizes.

The expectation is read back from the argv itself (not from our settings), so flags appended verbatim
(``extra_args``) are honoured, and nccl-tests' own defaults apply to flags the command leaves out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from gpufabric.bench.semantics import PRINTS_OP, ROOTED, aligned_in, layout
from gpufabric.bench.sweep_settings import DTYPE_SIZES
from gpufabric.errors import UsageError
from gpufabric.launch.names import LAUNCHER_KINDS
from gpufabric.results.model import RunResult
from gpufabric.results.readers.collective_names import program_name
from gpufabric.units import human_size, parse_size, size_sweep

MPI_HINT = "nccl-tests was built without MPI=1: every process ran its own 1-rank job; rebuild with make MPI=1"
# nccl-tests' defaults (src/common.cu) for the flags a command line leaves out.
_DEFAULTS = {"-b": "32M", "-e": "32M", "-f": "1", "-i": "1M", "-g": "1", "-t": "1", "-d": "float",
             "-o": "sum", "-r": "0"}  # fmt: skip
_LONG_NAMES = {
    "--minbytes": "-b", "--maxbytes": "-e", "--stepfactor": "-f", "--stepbytes": "-i", "--ngpus": "-g",
    "--nthreads": "-t", "--datatype": "-d", "--op": "-o", "--root": "-r",
}  # fmt: skip
# nccl-tests' GetCollByteCount of these equals that of the collective named (gather.cu, scatter.cu, ...).
_SAME_LAYOUT = {"hypercube": "all_gather"}
_LISTED_SIZES = 6


@dataclass(frozen=True)
class Expectation:
    """What a table printed by ``argv`` must show when run as ``processes`` processes by ``launcher``."""

    binary: str
    collective: str | None
    processes: int
    gpus_per_process: int
    launcher: str
    dtype: str
    op: str
    root: int
    sizes: tuple[int, ...] | None  # requested sizes (-b/-e/-f/-i); None when the flags do not parse
    sweep_flags: str

    @property
    def world_size(self) -> int:
        return self.processes * self.gpus_per_process

    @classmethod
    def from_command(cls, argv: Sequence[str], *, processes: int, launcher: str) -> Expectation:
        flags = _last_values(argv[1:])
        value = {**_DEFAULTS, **flags}
        try:
            factor = int(value["-f"])
            step = parse_size(value["-i"]) if factor <= 1 else 0
            sizes: tuple[int, ...] | None = tuple(
                size_sweep(parse_size(value["-b"]), parse_size(value["-e"]), max(factor, 2), step)
            )
        except (ValueError, UsageError):  # a form we do not read: the size check is skipped, not guessed
            sizes = None
        sweep = " ".join(f"{flag} {flags[flag]}" for flag in ("-b", "-e", "-f", "-i") if flag in flags)
        return cls(
            binary=Path(argv[0]).name if argv else "nccl-tests",
            collective=program_name(Path(argv[0]).name) if argv else None,
            processes=processes,
            gpus_per_process=_int(value["-t"], 1) * _int(value["-g"], 1),
            launcher=launcher,
            dtype=value["-d"],
            op=value["-o"],
            root=_int(value["-r"], 0),
            sizes=sizes,
            sweep_flags=sweep or "nccl-tests' default sizes",
        )

    def printed_sizes(self, tests_version: str | None = None) -> list[int] | None:
        """The size column nccl-tests prints for each requested size: whole elements per rank, and from
        nccl-tests 2.13.12 on a multiple of 16 bytes per rank (so small sizes of all_gather, alltoall,
        gather, scatter and reduce_scatter print as 0 B); ``tests_version`` from the output's header."""
        wordsize = DTYPE_SIZES.get(self.dtype)
        if self.sizes is None or self.collective is None or wordsize is None:
            return None
        collective = _SAME_LAYOUT.get(self.collective, self.collective)
        aligned = aligned_in(tests_version)
        try:
            printed = [
                layout(collective, s, wordsize, self.world_size, aligned=aligned).size_bytes
                for s in self.sizes
            ]
        except ValueError:  # a collective whose layout we do not model (alltoallv)
            return None
        return list(dict.fromkeys(printed))


def mismatch(result: RunResult, expect: Expectation) -> str | None:
    """One line saying how ``result`` differs from what ``expect`` launched, or None when it matches."""
    problems: list[str] = []
    seen = result.metadata.world_size
    ranks_differ = seen is not None and seen != expect.world_size
    if ranks_differ:
        problems.append(_rank_problem(seen or 0, expect))
    rows = [row for series in result.series for row in series.rows]
    names = sorted({s.collective.split("#")[0] for s in result.series} - {"unknown"})
    if expect.collective is not None and names and names != [expect.collective]:
        problems.append(f"the table is {', '.join(names)}, the command ran {expect.binary}")
    dtypes = sorted({row.dtype for row in rows})
    if expect.dtype != "all" and dtypes != [expect.dtype]:
        problems.append(f"the table's type is {', '.join(dtypes)}, the command asked -d {expect.dtype}")
    reducing = expect.collective in PRINTS_OP
    redop = expect.op if reducing else "none"
    redops = sorted({row.redop for row in rows})
    if expect.collective is not None and not (reducing and expect.op == "all") and redops != [redop]:
        asked = f"-o {expect.op}" if reducing else f"no reduction ({expect.binary})"
        problems.append(f"the table's reduction is {', '.join(redops)}, the command asked {asked}")
    roots = sorted({row.root for row in rows})
    if expect.collective in ROOTED and expect.root >= 0 and roots != [expect.root]:
        shown = ", ".join(str(r) for r in roots)
        problems.append(f"the table's root is {shown}, the command asked -r {expect.root}")
    expected_sizes = None if ranks_differ else expect.printed_sizes(result.metadata.tool_version)
    if expected_sizes is not None:
        problems.extend(
            _size_problems(sorted({row.size_bytes for row in rows}), expected_sizes, result, expect)
        )
    elif not result.complete:
        problems.append(f"incomplete output ({result.failure or 'the run ended early'})")
    if not problems:
        return None
    if not result.complete and all(p.startswith("incomplete") for p in problems):
        return f"{expect.binary}: {'; '.join(problems)}"
    return f"{expect.binary}: the output does not match the command: {'; '.join(problems)}"


def _rank_problem(seen: int, expect: Expectation) -> str:
    launched = (
        f"{expect.processes} process(es) x {expect.gpus_per_process} GPU(s)"
        if expect.processes > 1
        else f"-g {expect.gpus_per_process}"
    )
    line = f"the table has {seen} rank(s), the job launched {expect.world_size} ({launched})"
    mpi = (kind := LAUNCHER_KINDS.get(expect.launcher)) is not None and kind.mpi
    if mpi and expect.processes > 1 and seen == expect.gpus_per_process:
        return f"{line}; {MPI_HINT}"
    return f"{line}; check --gpus-per-node against the GPUs each node really has"


def _size_problems(
    printed: list[int], expected: list[int], result: RunResult, expect: Expectation
) -> list[str]:
    missing = [size for size in expected if size not in printed]
    extra = [size for size in printed if size not in expected]
    if extra or (missing and result.complete):
        return [
            f"the table's sizes are {_sizes_text(printed)}, the command ({expect.sweep_flags}) gives "
            f"{_sizes_text(expected)}"
        ]
    if missing or not result.complete:
        gone = f"no rows for {_sizes_text(missing)}" if missing else (result.failure or "no footer")
        return [f"incomplete table: {gone} (the run ended early or a row was lost)"]
    return []


def _sizes_text(sizes: list[int]) -> str:
    if not sizes:
        return "no sizes"
    if len(sizes) <= _LISTED_SIZES:
        return ", ".join(f"{size} B" for size in sizes)
    first, last = sizes[0], sizes[-1]
    return f"{first} B ({human_size(first)}) .. {last} B ({human_size(last)}), {len(sizes)} sizes"


def _last_values(args: Sequence[str]) -> dict[str, str]:
    """``-b 8 --op=max -d bfloat16`` -> {"-b": "8", "-o": "max", "-d": "bfloat16"}; the last one wins,
    as with nccl-tests' getopt_long."""
    flags: dict[str, str] = {}
    index = 0
    while index < len(args):
        arg = args[index]
        name, has_value, inline = arg.partition("=")
        name = _LONG_NAMES.get(name, name)
        if name in _DEFAULTS:
            if has_value:
                flags[name] = inline
            elif index + 1 < len(args):
                flags[name] = args[index + 1]
                index += 1
        index += 1
    return flags


def _int(text: str, fallback: int) -> int:
    try:
        return int(text, 0)
    except ValueError:
        return fallback
