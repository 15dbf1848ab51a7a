"""The doctor's output: a verdict per check, with cause and fix, per subject (a run, a node) and overall.

The same models serve ``gpufabric doctor`` on results/logs and ``gpufabric doctor --preflight`` on a node.
Exit codes are decided here, once: 0 when the worst verdict is PASS or SKIP, 1 when it is FAIL, and WARN
exits 0 unless ``strict`` (then 1). Usage and input errors keep their own code (2) from ``errors.py``.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from gpufabric.results.attestation import TransportClaims


class Verdict(StrEnum):
    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"
    SKIP = "skip"
    # Nothing failed, but no check proved the transport either: never shown as PASS (exit 0).
    NOTHING_PROVEN = "nothing-proven"

    @property
    def severity(self) -> int:
        """Ordering for 'worst': SKIP < PASS < NOTHING_PROVEN < WARN < FAIL."""
        return {"skip": 0, "pass": 1, "nothing-proven": 2, "warn": 3, "fail": 4}[self.value]

    @property
    def label(self) -> str:
        return self.value.replace("-", " ").upper()


# The checks whose PASS proves a transport (a network between nodes, or the links inside one host).
TRANSPORT_PROOFS = frozenset({"fabric-in-use", "intra-node"})


def worst(verdicts: list[Verdict]) -> Verdict:
    return max(verdicts, key=lambda v: v.severity, default=Verdict.SKIP)


class CheckResult(BaseModel):
    """One check's judgement: ``cause`` is what the evidence shows, ``fix`` what to change (none on PASS)."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(description="stable kebab-case name, e.g. fabric-in-use")
    title: str
    verdict: Verdict
    cause: str
    fix: str = ""
    evidence: list[str] = Field(default_factory=list, description="log facts or measurements behind it")


class SubjectReport(BaseModel):
    """The checks of one subject: a run (result file or NCCL logs) or the node a preflight ran on."""

    model_config = ConfigDict(extra="forbid")

    subject: str
    sources: list[str] = Field(default_factory=list)
    expectation: str = Field(default="", description="what the checks judged against, in words")
    checks: list[CheckResult] = Field(default_factory=list)
    judges_transport: bool = Field(
        default=False, description="a run's transport is judged: PASS needs a check that proves it"
    )
    attestation: TransportClaims | None = Field(
        default=None, description="the structured attestation: each claim with its log lines and confidence"
    )
    notes: list[str] = Field(
        default_factory=list, description="what of the inputs was not read, and why (NUL padding, long lines)"
    )

    @property
    def verdict(self) -> Verdict:
        verdict = worst([c.verdict for c in self.checks])
        if self.judges_transport and verdict in (Verdict.PASS, Verdict.SKIP):
            proven = any(c.id in TRANSPORT_PROOFS and c.verdict is Verdict.PASS for c in self.checks)
            return verdict if proven else Verdict.NOTHING_PROVEN
        return verdict


class DoctorReport(BaseModel):
    """Everything one doctor invocation found."""

    model_config = ConfigDict(extra="forbid")

    mode: str = Field(description="'results' or 'preflight'")
    subjects: list[SubjectReport] = Field(default_factory=list)

    @property
    def verdict(self) -> Verdict:
        return worst([s.verdict for s in self.subjects])

    def exit_code(self, *, strict: bool = False) -> int:
        verdict = self.verdict
        if verdict is Verdict.FAIL or (strict and verdict is Verdict.WARN):
            return 1
        return 0

    def to_json_dict(self) -> dict[str, object]:
        """The machine form: the models plus each subject's and the overall verdict."""
        data = self.model_dump(mode="json")
        data["verdict"] = self.verdict.value
        for subject, dumped in zip(self.subjects, data["subjects"], strict=True):
            dumped["verdict"] = subject.verdict.value
        return data
