"""A run's directory made ready before its ranks start, for every kind of run: where it is
(``default_run_dir``, ``resolved_run_dir``), the config every rank reads (``resolve_run_config``,
``write_run_config``) and the plan the run executes (``record_plan``).

The sweep (``bench.runner``), training (``train.runner``), isolate's group rounds (``bench.group_runner``)
and the modes that name a run directory (``gpufabric.jobs``) all go through these, so a run directory is
named, refused and written one way. The layout itself (its file names, the fresh-directory and
output-file checks) is ``bench.rundir``; nothing here starts a process.
"""

from __future__ import annotations

import re
import sys
from datetime import datetime
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel

from gpufabric.bench.rundir import NCCL_LOG_DIR, PLAN_NAME, check_fresh_run_dir, write_run_file
from gpufabric.boundary_names import RUNS_ROOT
from gpufabric.errors import UsageError
from gpufabric.launch.base import LaunchPlan
from gpufabric.redact import redact_argv

__all__ = ["default_run_dir", "record_plan", "resolve_run_config", "resolved_run_dir", "write_run_config"]


def default_run_dir(label: str, *, root: Path = RUNS_ROOT, now: datetime | None = None) -> Path:
    stamp = (now or datetime.now()).strftime("%Y%m%d-%H%M%S-%f")
    safe = re.sub(r"[^A-Za-z0-9._-]+", "-", label).strip("-") or "run"
    return root / f"{stamp}-{safe}"


def resolved_run_dir(run_dir: Path, label: str) -> Path:
    """The absolute run directory: ``runs`` (the default) means a fresh ``runs/<timestamp>-<label>/``."""
    return (default_run_dir(label, root=run_dir) if run_dir == RUNS_ROOT else run_dir).resolve()


ConfigT = TypeVar("ConfigT", bound=BaseModel)


def resolve_run_config(config: ConfigT, *, backend: str, config_name: str) -> tuple[ConfigT, Path]:
    """``config`` as the ranks will read it (absolute run directory, the backend chosen, the command line
    redacted) and the path it will be written to. Writes nothing; a directory that already holds a run
    is refused (``rundir.check_fresh_run_dir``), never merged."""
    run_dir = resolved_run_dir(getattr(config, "run_dir"), getattr(config, "label"))  # noqa: B009
    check_fresh_run_dir(run_dir, markers=[config_name])
    command = getattr(config, "command")  # noqa: B009 - any run config: BenchConfig, TrainConfig
    config = config.model_copy(
        update={"run_dir": run_dir, "backend": backend, "command": redact_argv(command or list(sys.argv))}
    )
    return config, run_dir / config_name


def write_run_config(config: BaseModel, config_path: Path) -> None:
    """Create the run directory with its NCCL log dir and write the config every rank reads."""
    run_dir = config_path.parent
    try:
        (run_dir / NCCL_LOG_DIR).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--run-dir: cannot create {run_dir} ({exc.strerror}); choose another path") from exc
    write_run_file(config_path, config.model_dump_json(indent=2) + "\n")


def record_plan(plan: LaunchPlan, run_dir: Path) -> Path:
    """The plan as executed, redacted, in ``<run_dir>/plan.json`` (what ``--dry-run`` would have printed)."""
    path = run_dir / PLAN_NAME
    write_run_file(path, plan.recorded_json())
    return path
