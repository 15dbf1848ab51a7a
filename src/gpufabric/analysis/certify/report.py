"""The one document a certify run returns: the plan it ran, every node's certificate, the summary,
and what the command line needs beyond them (a stop signal's exit code, files it could not write)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from gpufabric.analysis.certify.model import CertifySummary, NodeCertificate
from gpufabric.analysis.certify.plan import CertifyPlan


class CertifyReport(BaseModel):
    model_config = ConfigDict(extra="forbid")

    plan: CertifyPlan
    certificates: dict[str, NodeCertificate]
    summary: CertifySummary
    signal_exit: int | None = Field(default=None, description="128 + the stop signal, when one ended the run")
    write_errors: list[str] = Field(default_factory=list, description="files that could not be written")

    @property
    def exit_code(self) -> int:
        """0 every node passed (or degraded), 1 any failed or a file could not be written; a stop signal's
        own code when one ended the run."""
        if self.signal_exit is not None:
            return self.signal_exit
        return 1 if self.write_errors else self.summary.exit_code
