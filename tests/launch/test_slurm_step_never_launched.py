"""A Slurm step whose tasks srun could not start must fail the launch even though the job ended
COMPLETED with exit code 0. Read from a real capture (tests/fixtures/slurm/pmix_launch_failed: Slurm 23.11,
``srun --mpi=pmix``, PMIx's step directory already existed): both tasks "launch failed", no rank ran,
and slurmctld recorded WEXITSTATUS 0."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

from gpufabric.launch.slurm_job import _outcome
from gpufabric.launch.slurm_output import SlurmOutputFollower

CAPTURE = Path(__file__).parents[1] / "fixtures" / "slurm" / "pmix_launch_failed" / "slurm-7.out"


def _followed(node_tags: bool = True) -> tuple[SlurmOutputFollower, list[tuple[str, str]]]:
    shown: list[tuple[str, str]] = []
    follower = SlurmOutputFollower(CAPTURE, node_tags, lambda prefix, line: shown.append((prefix, line)))
    follower.poll(final=True)
    return follower, shown


def test_the_follower_keeps_the_tasks_srun_could_not_launch() -> None:
    follower, shown = _followed()
    assert follower.launch_failures == {0: "Unspecified error", 1: "Unspecified error"}
    assert follower.task_exits == {}  # no task ran, so none exited
    assert {prefix for prefix, _ in shown} == {"[slurm]"}


def test_a_completed_job_whose_tasks_never_launched_is_a_failed_launch() -> None:
    follower, _ = _followed()
    plan = cast(Any, SimpleNamespace(program=SimpleNamespace(nranks=2)))
    info = {"JobState": "COMPLETED", "ExitCode": "0:0", "NodeList": ""}  # what Slurm said of job 7
    outcome = _outcome(plan, "7", info, follower, None, 2.5, {})
    assert not outcome.ok
    assert outcome.failure is not None
    assert outcome.failure.startswith(
        "srun could not launch rank(s) 0, 1 (Unspecified error), so they never ran"
    )
    assert "ended COMPLETED with exit code 0" in outcome.failure and "SlurmdLogFile" in outcome.failure
    assert [e.returncode for e in outcome.exits] == [None, None]
