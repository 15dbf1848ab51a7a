"""The one Launcher interface: render a pure plan first, then execute it.

A ``RankProgram`` says *what* every rank runs (argv, environment, how many ranks, how they group into
nodes). A launcher turns it into a ``LaunchPlan``: the exact commands, files and manifests it would use.
Rendering touches nothing (tests and ``--dry-run`` inspect it); ``execute`` runs it, streams the ranks'
output with prefixes, and returns a ``LaunchOutcome`` with every rank's exit status.

Backends: ``local`` (this module's sibling local.py), ``mpirun``, ``slurm``, ``kubernetes``, ``skypilot``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, field_validator

from gpufabric.envnames import check_env_names
from gpufabric.redact import redact_argv, redact_env, redact_manifest, remember_secrets, scrub


class RankProgram(BaseModel):
    """What to run on every rank, independent of where."""

    model_config = ConfigDict(extra="forbid")

    argv: list[str] = Field(
        description="command each rank runs, e.g. python -m gpufabric.engines.torch.rank ..."
    )
    env: dict[str, str] = Field(default_factory=dict, description="extra environment for every rank")
    nranks: int = Field(ge=1, description="total ranks (world size)")
    nodes: int = Field(default=1, ge=1, description="nodes (real or, for local, virtual)")
    gpus_per_node: int = Field(default=0, ge=0, description="GPUs each node gives its ranks; 0 on CPU")
    workdir: Path = Field(description="run directory shared by the ranks (results, logs, stage files)")
    remote_workdir: str | None = Field(
        default=None,
        description="the run directory on machines that share nothing with this one (a pod, a fresh VM), "
        "when it differs from workdir (which stays this machine's: plan files, fetched results)",
    )
    label: str = "gpufabric"

    @field_validator("env")
    @classmethod
    def _env_names(cls, env: dict[str, str]) -> dict[str, str]:
        # UsageError passes through pydantic as itself: one line, exit 2, whoever built the program.
        check_env_names(env, where="the ranks' environment")
        # Every launched program's environment passes here: its secrets (a task's envs, --env) are hidden
        # from all output from now on, as the same values in this process's environment would be.
        remember_secrets(env)
        return env

    @property
    def ranks_per_node(self) -> int:
        return -(-self.nranks // self.nodes)


class PlannedCommand(BaseModel):
    """One process the launcher starts on this machine (mpirun, sbatch, one local rank ...)."""

    model_config = ConfigDict(extra="forbid")

    argv: list[str]
    env: dict[str, str] = Field(default_factory=dict, description="added to the inherited environment")
    cwd: Path | None = None
    ranks: list[int] = Field(default_factory=list, description="global ranks this process stands for")
    node_rank: int | None = None
    host: str | None = None

    @field_validator("env")
    @classmethod
    def _env_names(cls, env: dict[str, str]) -> dict[str, str]:
        check_env_names(env, where="a launched command's environment")
        return env


class LaunchPlan(BaseModel):
    """Everything a launcher would do, as data. ``redacted()`` is what gets printed or saved."""

    model_config = ConfigDict(extra="forbid")

    launcher: str
    program: RankProgram
    commands: list[PlannedCommand] = Field(default_factory=list)
    files: dict[str, str] = Field(default_factory=dict, description="path -> content the launcher writes")
    manifests: list[dict[str, object]] = Field(default_factory=list, description="Kubernetes objects etc.")
    notes: list[str] = Field(default_factory=list)

    def redacted(self) -> LaunchPlan:
        """A copy safe to print or store: secret-looking variables keep their names, lose their values;
        secret shapes (a URL password, a token) are scrubbed from command lines, files, manifests (Secret
        ``stringData`` included) and notes."""
        program = self.program.model_copy(update={"env": redact_env(self.program.env)})
        commands = [
            command.model_copy(update={"env": redact_env(command.env), "argv": redact_argv(command.argv)})
            for command in self.commands
        ]
        manifests = [redact_manifest(m) for m in self.manifests]
        files = {path: scrub(content) for path, content in self.files.items()}
        notes = [scrub(note) for note in self.notes]
        return self.model_copy(
            update={"program": program, "commands": commands, "manifests": manifests, "files": files,
                    "notes": notes}
        )  # fmt: skip

    def recorded_json(self) -> str:
        """The redacted plan as one JSON document: what a run directory's ``plan.json`` holds and
        ``--dry-run --format json`` prints, so the two compare byte for byte."""
        return self.redacted().model_dump_json(indent=2) + "\n"


class RankExit(BaseModel):
    model_config = ConfigDict(extra="forbid")

    rank: int
    host: str | None = None
    returncode: int | None = Field(
        description="exit status; negative = killed by that signal; None = not reaped"
    )
    last_lines: list[str] = Field(default_factory=list)
    stopped: bool = Field(
        default=False, description="still running when the supervisor stopped the job: never the cause"
    )


class LaunchOutcome(BaseModel):
    """How the job ended."""

    model_config = ConfigDict(extra="forbid")

    ok: bool
    exits: list[RankExit] = Field(default_factory=list)
    failure: str | None = Field(default=None, description="one line: which rank, where and why")
    timed_out: bool = False
    wall_s: float = 0.0


OutputSink = Callable[[str, str], None]
"""Called with (prefix, line) for every line a rank prints, e.g. ("[rank 1]", "...")."""


@runtime_checkable
class Launcher(Protocol):
    """A backend that can place ranks somewhere."""

    name: str

    def render(self, program: RankProgram) -> LaunchPlan:
        """The pure plan: no process started, no file written, no API called."""
        ...

    def execute(
        self, plan: LaunchPlan, *, on_output: OutputSink | None = None, timeout_s: float | None = None
    ) -> LaunchOutcome:
        """Run the plan, stream output, stop every rank on the first failure or on timeout."""
        ...
