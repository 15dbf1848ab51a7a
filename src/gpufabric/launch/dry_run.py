"""What a prepared job shows in a dry run (the ``DryRunnable`` protocol, as rich's ``__rich__``): every
``Prepared*`` of ``gpufabric.jobs`` (and ``bench.runner.PreparedSweep``) answers ``dry_run()`` with its
notes and its jobs in the order they run, each a launch plan with its header fields;
``report.prepared_render`` turns any of them into text or JSON without asking which kind it is.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Protocol, runtime_checkable

from gpufabric.launch.base import LaunchPlan


@dataclasses.dataclass(frozen=True)
class DryRunJob:
    """One job of a prepared mode: its header fields (JSON: ``round``, ``side``, ``candidate`` ...), the
    line heading its plan in text (``A/B round 1: on``; None: no heading) and its plan."""

    header: dict[str, Any]
    plan: LaunchPlan
    title: str | None = None


@dataclasses.dataclass(frozen=True)
class DryRun:
    """A prepared mode as a dry run prints it."""

    notes: list[str]
    """What the dry run adds (``# NOTE`` lines in text, ``notes`` in JSON)."""
    jobs: list[DryRunJob]
    notes_last: bool = False
    """Text: the notes after the plans (tune's: where the later rounds go), not before them."""
    separator: str = "\n"
    """Text: what stands between two jobs' plans."""
    single_plan: bool = False
    """JSON: the one plan alone, byte for byte what its ``plan.json`` records (launch)."""


@runtime_checkable
class DryRunnable(Protocol):
    """A prepared job: decided, not started."""

    def dry_run(self) -> DryRun: ...
