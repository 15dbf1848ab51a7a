"""Every run directory a gpufabric command writes, recognised by the document it leaves there.

``report``, ``show`` and ``compare`` take a directory wherever they take a file. What a directory holds is
decided here, once, from its marker file; a command that writes a new kind of directory registers it
(``register_run_directory``) and, for ``show`` to print it, its document's type and renderer
(``report.run_documents.register_run_document``). The built-in kinds:

    bench, bench --self-test   result.json (result.jsonl while running)   one run
    bench --ab                 ab.json, fabric-on.json, fabric-off.json    two pooled runs + the verdict
    bench --ab --ab-a/--ab-b   ab.json, A.json, B.json (or --ab-names)     the same, for two configurations
    tune                       tune.json, r<round>-<candidate>/            one run per candidate job
    isolate                    isolate.json, roundNN/                      group timings, no series
    isolate round              round.json, round-config.json               one round's group timings
    train-bench [--ab]         train.json / train-ab.json                  training throughput, no series
    certify                    certify-summary.json, node/<name>/          one run per node's own sweep
    launch                     gpufabric-job.sbatch, gpufabric-skypilot.yaml   the task's own output

A directory that holds no benchmark series is described in one line: what it is, which command wrote
it, and which command reads it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gpufabric.errors import UsageError
from gpufabric.results.io import RESULT_NAME, STREAM_NAME

_MAX_SERIES_FILES = 256  # a tune root holds one job per candidate and round: a few dozen


@dataclass(frozen=True)
class RunDirectory:
    """One kind of run directory: the file that marks it, what it is, and where its runs are."""

    command: str  # the command that writes it, as typed: "gpufabric bench --ab"
    marker: str  # the file whose presence identifies the kind
    what: str  # in words, for the one line that describes a directory
    series: tuple[str, ...] = ()  # globs, relative to the directory, of the files holding its runs
    read_with: str = "gpufabric show DIR"  # the command that prints it: DIR the directory, PARENT its parent

    def runs_in(self, directory: Path) -> list[tuple[str, Path]]:
        """(label, file) of each run the directory holds, in the order the globs and names give."""
        found: list[tuple[str, Path]] = []
        for pattern in self.series:
            for path in sorted(directory.glob(pattern))[:_MAX_SERIES_FILES]:
                wildcard_hit_marker = path.name == self.marker and pattern != self.marker
                if path.is_file() and not wildcard_hit_marker and all(path != p for _, p in found):
                    label = path.parent.name if path.name == RESULT_NAME else path.stem
                    found.append((label, path))
        return found


_KINDS: list[RunDirectory] = []


def register_run_directory(kind: RunDirectory) -> None:
    """Add a kind (a later registration of the same marker replaces the earlier one)."""
    _KINDS[:] = [k for k in _KINDS if k.marker != kind.marker]
    _KINDS.append(kind)


def unregister_run_directory(marker: str) -> None:
    _KINDS[:] = [k for k in _KINDS if k.marker != marker]


def identify(directory: Path) -> RunDirectory | None:
    """The kind of ``directory`` by its marker file, or None when it holds none of them."""
    return next((kind for kind in _KINDS if (directory / kind.marker).is_file()), None)


def describe(directory: Path, kind: RunDirectory | None = None) -> str:
    """One line: what the directory is, who wrote it and what reads it."""
    kind = kind or identify(directory)
    if kind is None:
        markers = ", ".join(dict.fromkeys(k.marker for k in _KINDS))
        return (
            f"{directory}: not a gpufabric run directory (it holds none of {markers}); give a result file "
            "or the directory a gpufabric command wrote"
        )
    reads = kind.read_with.replace("PARENT", str(directory.parent)).replace("DIR", str(directory))
    return f"{directory} is {kind.what}, written by `{kind.command}`; read it with `{reads}`"


def is_single_run(directory: Path) -> bool:
    """A bench run directory (result.json or its stream): read as one run, not as a document."""
    kind = identify(directory)
    return kind is not None and kind.marker in (RESULT_NAME, STREAM_NAME)


describe_run_directory = describe


def series_files(directory: Path) -> list[tuple[str, Path]]:
    """(label, file) of the benchmark runs in ``directory``; a ``UsageError`` with ``describe``'s line
    when it holds none (an isolate run, a training run, a launch)."""
    kind = identify(directory)
    found = kind.runs_in(directory) if kind is not None else []
    if not found:
        raise UsageError(f"{describe(directory, kind)}; it holds no benchmark series to compare")
    return found


for _kind in (
    RunDirectory(
        "gpufabric bench", RESULT_NAME, "a benchmark run (bench, or bench --self-test)", (RESULT_NAME,)
    ),
    RunDirectory(
        "gpufabric bench", STREAM_NAME, "a benchmark run that has not finished (its stream)", (STREAM_NAME,)
    ),
    RunDirectory(
        "gpufabric bench --ab",
        "ab.json",
        "an A/B (the fabric on and off, or two configurations, pooled per side, and the verdict)",
        ("fabric-on.json", "fabric-off.json", "*.json"),  # a configuration A/B's sides: A.json, B.json, ...
        "gpufabric report DIR",
    ),
    RunDirectory(
        "gpufabric tune",
        "tune.json",
        "a tune search (the candidates' ranking and the recommendation)",
        ("r*-*/result.json",),
    ),
    RunDirectory("gpufabric isolate", "isolate.json", "an isolate search (groups, rounds and verdicts)"),
    RunDirectory(
        "gpufabric isolate",
        "round.json",
        "one round of an isolate search (each group's timing)",
        read_with="gpufabric show PARENT",
    ),
    RunDirectory(
        "gpufabric certify",
        "certify-summary.json",
        "a certification (each node's verdict and certificate, certify-report.html)",
        ("node/*/result.json",),
    ),
    RunDirectory("gpufabric train-bench", "train.json", "a training run (samples/s, compute and comm)"),
    RunDirectory("gpufabric train-bench --ab", "train-ab.json", "a training A/B (the fabric on and off)"),
    RunDirectory(
        "gpufabric launch --on slurm",
        "gpufabric-job.sbatch",
        "a launch's Slurm job (its batch script and slurm-<job>.out)",
        read_with="cat DIR/slurm-*.out",
    ),
    RunDirectory(
        "gpufabric launch --on skypilot",
        "gpufabric-skypilot.yaml",
        "a launch's SkyPilot task",
        read_with="sky logs",
    ),
):
    register_run_directory(_kind)
