"""From a RAS answer to an accusation with proof: the nodes to suspect, the healthy nodes to test them
beside, and the ``gpufabric isolate`` command that measures both.

A node is suspect when RAS got no data from a process on it (missing, unresponsive or dead ranks, the
processes of RAS's INCOMPLETE and DEAD sections), or, more weakly, when its ranks form a minority group of
a MISMATCH (behind the rest in launched operations, or in another state): RAS's guide calls such counts
normal while collectives run, so those are named ``lagging`` and only a repeated query that shows the same
counts makes them a finding. Healthy controls are the nodes whose ranks all answered.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from gpufabric.nccl_native.ras_model import RasStatus

MAX_CONTROLS = 3


class Suspect(BaseModel):
    """One node RAS's answer points at, and why."""

    model_config = ConfigDict(extra="forbid")

    host: str
    strength: str = Field(description="'silent' (no data, dead or unresponsive) or 'lagging' (MISMATCH)")
    reasons: list[str] = Field(default_factory=list)


class Accusation(BaseModel):
    """The suspects, the healthy controls, and how to prove it."""

    model_config = ConfigDict(extra="forbid")

    suspects: list[Suspect] = Field(default_factory=list)
    controls: list[str] = Field(default_factory=list)

    def isolate_argv(self, hostfile: Path) -> list[str]:
        """The ``gpufabric isolate`` run over suspects and controls (one rank per node, as isolate runs),
        reading ``hostfile``; the caller writes the file with ``hostfile_text``."""
        ranks = len(self.suspects) + len(self.controls)
        return ["gpufabric", "isolate", "--on", "mpirun", "--hostfile", str(hostfile), "--ranks", str(ranks)]

    def isolate_command(self, hostfile: Path) -> str:
        """``isolate_argv`` as the one line a user types."""
        return shlex.join(self.isolate_argv(hostfile))

    def hostfile_text(self) -> str:
        """An OpenMPI hostfile, suspects first, one slot each."""
        hosts = [s.host for s in self.suspects] + self.controls
        return "".join(f"{host} slots=1\n" for host in hosts)


def _add(found: dict[str, Suspect], host: str | None, strength: str, reason: str) -> None:
    if not host:
        return
    suspect = found.setdefault(host, Suspect(host=host, strength=strength))
    if strength == "silent":
        suspect.strength = "silent"
    if reason not in suspect.reasons:
        suspect.reasons.append(reason)


def accuse(status: RasStatus) -> Accusation:
    """The suspects and controls RAS's answer ``status`` names (pure)."""
    found: dict[str, Suspect] = {}
    for comm, missing in status.missing_ranks():
        pid = f" (pid {missing.pid})" if missing.pid is not None else ""
        _add(found, missing.host, "silent", f"rank {missing.rank} of comm {comm.hash} {missing.state}{pid}")
    for process in status.dead_processes:
        _add(found, process.host, "silent", f"process {process.pid} dead (GPU {process.gpus})")
    for process in status.incomplete_processes:
        _add(found, process.host, "silent", f"process {process.pid} sent no data (GPU {process.gpus})")
    for comm in status.communicators:
        for mismatch in comm.mismatches:
            for group in mismatch.minority():
                for member in group.ranks:
                    reason = f"rank {member.rank} of comm {comm.hash}: {mismatch.what} {group.value}"
                    _add(found, member.host, "lagging", reason)
    answered = {
        rank.host
        for comm in status.communicators
        for rank in comm.ranks
        if rank.host and rank.host not in found
    }
    suspects = sorted(found.values(), key=lambda s: (s.strength != "silent", s.host))
    return Accusation(suspects=suspects, controls=sorted(answered)[:MAX_CONTROLS])
