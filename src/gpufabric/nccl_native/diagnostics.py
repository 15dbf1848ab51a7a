"""NCCL's own diagnostics (NCCL 2.31 and newer): the ``NCCL DIAG`` lines it prints, as typed evidence.

Two sources print them (troubleshooting/diagnostics.rst and ras.rst of NCCL's user guide):
``NCCL_RUN_DIAGNOSTICS=1`` runs the active checks at every communicator init (the P2P write/read check of
every GPU pair NCCL would connect directly, and across nodes an ``ib_write_bw`` check), and
``NCCL_RUN_RAS_DIAGNOSTICS=1`` (or RAS's ``DIAGNOSTICS`` command) compares GPU model, driver, ECC, NVLink
and the ``NCCL_*`` environment across ranks. Both print to the standard output of rank 0's process, each
line ``<host>:<pid> NCCL DIAG `` then ``[OK]``/``[INFO]`` (``DIAG_PRINT``, src/include/diagnostics_log.h;
``rasDiagnosticsFormatLine``, src/ras/diagnostics.cc; tag v2.31.2-1). The line shapes read here are
``ncclDiagP2pReport`` and ``ncclDiagP2pReportSummary`` (src/diagnostics/p2p.cc), the completion lines of
src/diagnostics.cc and src/ras/diagnostics.cc, and the NCCL-environment lines of
src/ras/diagnostics_env.cc. Diagnostics never abort init: a failure here is evidence, not a crash.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, MutableMapping

from pydantic import BaseModel, ConfigDict, Field

FIRST_VERSION = (2, 31)
DIAGNOSTICS_ENV = {"NCCL_RUN_DIAGNOSTICS": "1", "NCCL_RUN_RAS_DIAGNOSTICS": "1"}

_LINE = re.compile(r"(?P<host>[^\s:]+):(?P<pid>\d+) NCCL DIAG (?P<body>.*?)\s*$")
_TAGGED = re.compile(r"^\[(?P<tag>OK|INFO)\]\s+(?P<check>[^:]+): (?P<message>.*)$")
_SUMMARY = re.compile(
    r"^(?:all (?P<all>\d+)|(?P<passed>\d+)/(?P<tested>\d+)) directed GPU P2P edges verified"
    r"(?: \(skipped indirect=(?P<skipped>\d+)\))?"
)
_EDGE = re.compile(
    r"^(?P<what>[^:]+?) srcRank=(?P<src>\d+) srcCudaDev=(?P<src_cuda>-?\d+) srcNvmlDev=(?P<src_nvml>-?\d+) "
    r"dstRank=(?P<dst>\d+) dstCudaDev=(?P<dst_cuda>-?\d+) dstNvmlDev=(?P<dst_nvml>-?\d+) path=(?P<path>\S+) "
    r"handle=(?P<handle>\S+)(?: reason=(?P<reason>\w+))?"
)
_DONE = re.compile(r"^(?P<who>NCCL|RAS) diagnostics completed in (?P<ms>[\d.]+) ms across (?P<n>\d+)")
_ENV_MISMATCH = re.compile(r"^mismatch across \d+ ranks in comm (?P<comm>0x[0-9a-f]+) for (?P<name>\S+)$")
_ENV_VALUE = re.compile(r"^(?P<name>[^=\s]+)=(?P<value>.*) on rank\(s\) \{(?P<ranks>[^}]*)\}")


class P2pEdgeFailure(BaseModel):
    """One directed GPU pair whose P2P write or read check failed, as NCCL named it."""

    model_config = ConfigDict(extra="forbid")

    what: str = Field(description="NCCL's words: 'write mismatch', 'peer-memory import failed', ...")
    src_rank: int
    dst_rank: int
    src_cuda_dev: int
    dst_cuda_dev: int
    src_nvml_dev: int
    dst_nvml_dev: int
    path: str = Field(description="NCCL's path type between the GPUs: NVL, PIX, PXB, PHB, SYS, ...")
    handle: str
    reason: str | None = None
    advice: str = Field("", description="NCCL's own next step, after the ';'")

    def pair(self) -> str:
        source = f"rank {self.src_rank} (GPU {self.src_nvml_dev})"
        return f"{source} -> rank {self.dst_rank} (GPU {self.dst_nvml_dev})"


class EnvMismatch(BaseModel):
    """An ``NCCL_*`` variable whose value differs across a communicator's ranks (RAS diagnostics)."""

    model_config = ConfigDict(extra="forbid")

    comm: str
    name: str
    values: dict[str, str] = Field(default_factory=dict, description="value -> its rank set, as NCCL printed")


class NcclDiagnostics(BaseModel):
    """Everything the ``NCCL DIAG`` lines of one log (or one RAS answer) said."""

    model_config = ConfigDict(extra="forbid")

    lines: list[str] = Field(default_factory=list, description="the DIAG lines, verbatim")
    p2p_passed: int | None = None
    p2p_tested: int | None = None
    p2p_skipped_indirect: int = 0
    p2p_failures: list[P2pEdgeFailure] = Field(default_factory=list)
    env_mismatches: list[EnvMismatch] = Field(default_factory=list)
    checks_ok: list[str] = Field(default_factory=list, description="'[OK]' lines: check and message")
    findings: list[str] = Field(default_factory=list, description="'[INFO]' lines not read into fields")
    completed: list[str] = Field(default_factory=list, description="'... diagnostics completed in' lines")

    def ran(self) -> bool:
        return bool(self.lines)

    def clean(self) -> bool:
        """Diagnostics ran and reported no finding."""
        return (
            self.ran()
            and not (self.p2p_failures or self.env_mismatches or self.findings)
            and (self.p2p_tested is None or self.p2p_passed == self.p2p_tested)
        )


def _tagged(report: NcclDiagnostics, tag: str, check: str, message: str) -> None:
    if check == "p2p" and (m := _SUMMARY.match(message)):
        tested = int(m["all"] or m["tested"])
        report.p2p_tested = (report.p2p_tested or 0) + tested
        report.p2p_passed = (report.p2p_passed or 0) + int(m["all"] or m["passed"])
        report.p2p_skipped_indirect += int(m["skipped"] or 0)
        if tag == "OK":
            report.checks_ok.append(f"{check}: {message}")
        return
    if check == "p2p" and (m := _EDGE.match(message)):
        advice = message.partition("; ")[2]
        failure = P2pEdgeFailure(
            what=m["what"], src_rank=int(m["src"]), dst_rank=int(m["dst"]), src_cuda_dev=int(m["src_cuda"]),
            dst_cuda_dev=int(m["dst_cuda"]), src_nvml_dev=int(m["src_nvml"]), dst_nvml_dev=int(m["dst_nvml"]),
            path=m["path"], handle=m["handle"], reason=m["reason"], advice=advice.strip(),
        )  # fmt: skip
        report.p2p_failures.append(failure)
        return
    if check == "NCCL environment" and tag == "INFO":
        if m := _ENV_MISMATCH.match(message):
            report.env_mismatches.append(EnvMismatch(comm=m["comm"], name=m["name"]))
            return
        if (m := _ENV_VALUE.match(message)) and report.env_mismatches:
            report.env_mismatches[-1].values[m["value"]] = "{" + m["ranks"] + "}"
            return
        if "differ across ranks" in message:
            return  # the count line after the per-variable lines: nothing new
    if tag == "OK":
        report.checks_ok.append(f"{check}: {message}")
    else:
        report.findings.append(f"{check}: {message}")


def read_diagnostics(lines: Iterable[str]) -> NcclDiagnostics:
    """The ``NCCL DIAG`` lines among ``lines`` (any prefix before ``host:pid`` is ignored: mpirun tags,
    timestamps), read into one report. Lines of other kinds are skipped."""
    report = NcclDiagnostics()
    for line in lines:
        match = _LINE.search(line)
        if match is None:
            continue
        body = match["body"]
        report.lines.append(line.rstrip("\n"))
        if m := _TAGGED.match(body):
            _tagged(report, m["tag"], m["check"].strip(), m["message"])
        elif _DONE.match(body):
            report.completed.append(body)
    return report


def version_tuple(version: str | None) -> tuple[int, ...] | None:
    """``"2.31.2"`` (or ``"2.31.2+cuda13.0"``) as ``(2, 31, 2)``; ``None`` when unknown or unreadable."""
    if not version:
        return None
    numbers = re.match(r"(\d+)\.(\d+)(?:\.(\d+))?", version)
    return tuple(int(n) for n in numbers.groups() if n is not None) if numbers else None


def has_diagnostics(version: str | None) -> bool:
    """True when NCCL ``version`` runs init diagnostics (2.31 and newer)."""
    numbers = version_tuple(version)
    return numbers is not None and numbers[:2] >= FIRST_VERSION


def diagnostics_note(version: str | None) -> str:
    """The one note for a run whose NCCL cannot run its own diagnostics (empty when it can)."""
    if has_diagnostics(version):
        return ""
    which = f"NCCL {version}" if version else "this NCCL (version unknown)"
    return (
        f"{which} has no init diagnostics: NCCL_RUN_DIAGNOSTICS (the P2P write/read check of every GPU pair) "
        "and NCCL_RUN_RAS_DIAGNOSTICS (driver, ECC, NVLink and NCCL_* settings compared across ranks) "
        "arrived in NCCL 2.31"
    )


def enable_diagnostics(version: str | None, environ: MutableMapping[str, str]) -> str:
    """Turn NCCL's init diagnostics on in ``environ`` (a rank's own, before its communicator exists) when
    NCCL ``version`` has them and the user has not chosen either variable; returns the note for the run:
    what older NCCL lacks, or that they ran, or that the user's choice was kept."""
    if not has_diagnostics(version):
        return diagnostics_note(version)
    chosen = [name for name in DIAGNOSTICS_ENV if name in environ]
    if chosen:
        return f"NCCL {version}: init diagnostics as the environment set them ({', '.join(chosen)})"
    environ.update(DIAGNOSTICS_ENV)
    return f"NCCL {version}: init diagnostics on (NCCL_RUN_DIAGNOSTICS=1, NCCL_RUN_RAS_DIAGNOSTICS=1)"
