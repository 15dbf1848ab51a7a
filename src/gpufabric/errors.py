"""The project's exception tree: one base, a few documented branches.

Library code raises these (never ``sys.exit``, never prints); the CLI's single handler turns them into
``Error: message`` and ``exit_code``. Every message is one line that names what was wrong, where, the
valid choices and the fix. Lower-layer failures (subprocess, torch.distributed, YAML, Kubernetes) are
translated at the boundary with ``raise X(...) from exc``.

    GpufabricError                 base; exit 1
    ├── UsageError                 bad flag, bad value, impossible combination; exit 2
    ├── InputError                 a file we were asked to read cannot be read or parsed; exit 2
    ├── CatalogError               unknown shape, contradictory plan request; exit 2
    ├── OutputError                an output (file, run directory, standard output) cannot be written; exit 2
    ├── LaunchError                a launcher could not start, or a rank failed; exit 1
    │   └── RankFailure            a rank exited non-zero (carries rank, host, last lines)
    ├── BenchTimeout               a stage of a run passed its deadline; exit 124 (like timeout(1))
    ├── TestbedError               a network-namespace test bed could not be built, changed or removed
    └── CheckFailed                --check found wrong data; exit 3
"""

from __future__ import annotations

from pathlib import Path


class GpufabricError(Exception):
    """Base of every error gpufabric raises on purpose."""

    exit_code: int = 1


class UsageError(GpufabricError):
    """A flag or argument is invalid; the message names it and the valid choices."""

    exit_code = 2


def choice(flag: str, value: str, choices: tuple[str, ...]) -> str:
    """``value`` when it is one of ``choices``, else the one ``UsageError`` every fixed-choice flag
    raises: ``--flag: unknown value 'x'; choose from a, b``."""
    if value not in choices:
        raise UsageError(f"{flag}: unknown value {value!r}; choose from {', '.join(choices)}")
    return value


class InputError(GpufabricError):
    """A file could not be read or parsed; the message names the file, the line and the problem."""

    exit_code = 2


class CatalogError(GpufabricError):
    """A catalog lookup or plan request is unknown or contradictory."""

    exit_code = 2


class OutputError(GpufabricError):
    """Writing an output failed (a full disk, a full device behind standard output); the message names
    the path and, for a full disk, the free space left."""

    exit_code = 2


class LaunchError(GpufabricError):
    """A launcher could not start the job, or the job failed."""

    exit_code = 1


class RankFailure(LaunchError):
    """A rank exited non-zero or was killed."""

    def __init__(
        self,
        message: str,
        *,
        rank: int | None = None,
        host: str | None = None,
        last_lines: list[str] | None = None,
    ) -> None:
        super().__init__(message)
        self.rank = rank
        self.host = host
        self.last_lines = last_lines or []


class BenchTimeout(GpufabricError):
    """A stage (launch, rendezvous, init, a collective at a size) passed its deadline."""

    exit_code = 124

    def __init__(
        self, message: str, *, stage: str | None = None, missing_ranks: list[int] | None = None
    ) -> None:
        super().__init__(message)
        self.stage = stage
        self.missing_ranks = missing_ranks or []


class TestbedError(GpufabricError):
    """A command that builds, shapes or removes a test bed (``gpufabric.testbed``) failed or timed out;
    the message names the command, what it said and what to check."""

    __test__ = False  # a name that starts with "Test": pytest must not try to collect it from test modules


class CheckFailed(GpufabricError):
    """Correctness checking found wrong data."""

    exit_code = 3

    def __init__(self, message: str, *, result_path: Path | None = None) -> None:
        super().__init__(message)
        self.result_path = result_path
        """where the run's result (with the wrong data counted) was kept, when it was"""
