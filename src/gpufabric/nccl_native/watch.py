"""``gpufabric watch``'s document: one look at a running job through RAS, with what to do about it.

``watch_job`` queries RAS (``ras_client.query_status``), names suspects and controls (``suspects.accuse``),
and, when asked, runs RAS's diagnostics (NCCL 2.31+). Pure of printing; the CLI renders
(``report.ras_render``) and writes the hostfile the isolate command reads.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from gpufabric.errors import GpufabricError
from gpufabric.nccl_native.diagnostics import NcclDiagnostics, read_diagnostics
from gpufabric.nccl_native.ras_client import RAS_TIMEOUT_S, RasAddress, query_diagnostics, query_status
from gpufabric.nccl_native.ras_model import RasStatus
from gpufabric.nccl_native.suspects import Accusation, accuse


class RasWatch(BaseModel):
    """What RAS said, whom it points at, and the isolate run that would prove it."""

    model_config = ConfigDict(extra="forbid")

    status: RasStatus
    accusation: Accusation
    isolate_command: str | None = Field(None, description="set when suspects and a hostfile exist")
    diagnostics: NcclDiagnostics | None = None
    diagnostics_error: str | None = None

    def exit_code(self) -> int:
        """0 when every rank answered and nothing is dead; 1 otherwise (health checks branch on it)."""
        return 0 if self.status.healthy() else 1


def watch_job(
    address: RasAddress,
    *,
    want_json: bool = True,
    ras_timeout_s: int = RAS_TIMEOUT_S,
    connect_timeout_s: float = 2.0,
    with_diagnostics: bool = False,
    hostfile: Path | None = None,
) -> RasWatch:
    """Query RAS at ``address`` once and judge the answer. With ``hostfile``, the isolate command that
    would read it is included (the caller writes it: ``accusation.hostfile_text()``)."""
    status = query_status(
        address, want_json=want_json, ras_timeout_s=ras_timeout_s, connect_timeout_s=connect_timeout_s
    )
    accusation = accuse(status)
    command = accusation.isolate_command(hostfile) if hostfile is not None and accusation.suspects else None
    diagnostics, error = None, None
    if with_diagnostics:
        try:
            raw = query_diagnostics(address, connect_timeout_s=connect_timeout_s)
            diagnostics = read_diagnostics(raw.splitlines())
        except GpufabricError as exc:  # the status is still worth showing: keep the reason beside it
            error = str(exc)
    return RasWatch(
        status=status, accusation=accusation, isolate_command=command, diagnostics=diagnostics,
        diagnostics_error=error,
    )  # fmt: skip
