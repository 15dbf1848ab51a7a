"""How a job runs, as one frozen value: where (the launcher), how wide (nodes, ranks), with what
environment, within which time limits, and who hears about it (output, progress, the NCCL attester,
the finisher).

The sweep (``bench.runner``), the A/B (``bench.ab``), tune (``bench.tune_search``) and the jobs layer
(``gpufabric.jobs``) pass this one object instead of a dozen keyword arguments each, so a setting given
once reaches every job of a mode, and a mode that runs several jobs (A/B sides, tune candidates) changes
only what differs per job (``replace``).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

from gpufabric.bench.stages import StageTimeouts
from gpufabric.launch.base import Launcher, OutputSink
from gpufabric.results.attestation import Attestation
from gpufabric.results.model import RunResult

LauncherFactory = Callable[[], Launcher]
"""Makes a fresh launcher per job (A/B rounds and tune candidates are separate jobs)."""
ProgressSink = Callable[[int, int, str, int], None]
"""Called with (rows done, rows expected, collective, size in bytes) as rank 0 finishes each size."""
Attester = Callable[[Sequence[Path]], Attestation]
"""Turns the run's NCCL logs into an ``Attestation`` (``gpufabric.nccl_logs.attest.attest_files``)."""
Finisher = Callable[[RunResult], RunResult]
"""The caller's last step on a finished result before its one write (the CLI's judgement against the
hardware), so the result file is written once after the ranks exit, not once per step."""


@dataclasses.dataclass(frozen=True)
class Execution:
    """Where and how a job's ranks run. A dataclass, not a pydantic model: it carries callables.

    ``environ`` is the environment the ranks inherit (None: this process's, read when the job is
    prepared); ``env`` is what the user added on top (``--env``); ``unset`` names variables to remove from
    the ranks' environment (a fabric-off profile). ``ranks_here``: every rank runs on this host, so its
    memory bounds ``-e`` (None: when the launcher is the local one).
    """

    launcher: LauncherFactory | None = None
    nodes: int = 1
    ranks: int | None = None
    env: Mapping[str, str] = dataclasses.field(default_factory=dict)
    environ: Mapping[str, str] | None = None
    unset: tuple[str, ...] = ()
    timeout_s: float | None = None
    stage_timeouts: StageTimeouts | None = None
    ranks_here: bool | None = None
    out: Path | None = None
    on_output: OutputSink | None = None
    on_progress: ProgressSink | None = None
    attest: Attester | None = None
    finish: Finisher | None = None

    def __post_init__(self) -> None:
        # Frozen all the way down: a job cannot change the environment the next job of its mode sees.
        object.__setattr__(self, "env", MappingProxyType(dict(self.env)))
        if self.environ is not None:
            object.__setattr__(self, "environ", MappingProxyType(dict(self.environ)))
        object.__setattr__(self, "unset", tuple(self.unset))

    def replace(self, **changes: Any) -> Execution:
        """A copy with ``changes`` (one A/B side's environment, one tune candidate's)."""
        return dataclasses.replace(self, **changes)

    def base_environ(self) -> Mapping[str, str]:
        """The environment the ranks inherit: ``environ``, else this process's (read now)."""
        return os.environ if self.environ is None else self.environ

    def job_launcher(self) -> Launcher:
        """A fresh launcher for one job, fitted to ``nodes`` and ``unset`` (``bench.adapt``)."""
        from gpufabric.bench.adapt import AdaptedLauncher

        inner = self.launcher() if self.launcher is not None else _local()
        return AdaptedLauncher(inner, nodes=self.nodes, unset=self.unset)


def _local() -> Launcher:
    from gpufabric.launch.local import LocalLauncher

    return LocalLauncher()
