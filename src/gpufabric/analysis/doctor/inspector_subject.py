"""The doctor's reading of NCCL Inspector output (``nccl_native.inspector``): one subject per dump, whose
check names the collectives and ranks that stand out from their peers (WARN, for ``isolate`` to prove) or
says none does (PASS). It judges no transport: the Inspector times collectives, it does not say how they
travelled. A path that holds only Inspector output is not also read as a run."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from gpufabric.analysis.doctor.model import CheckResult, SubjectReport, Verdict
from gpufabric.nccl_native import inspector_files, read_inspector
from gpufabric.results.run_dirs import identify


def only_inspector(path: Path) -> bool:
    """True for an Inspector file, or a directory (no run directory) whose files, one level down too,
    are all Inspector output: a job directory with NCCL logs beside a dump is also read as a run."""
    files = inspector_files(path)
    if path.is_file() or not files:
        return bool(files)
    others = [p for p in (*path.glob("*"), *path.glob("*/*")) if p.is_file() and p not in files]
    return identify(path) is None and not others


def inspector_subjects(paths: Sequence[Path]) -> list[SubjectReport]:
    """One subject per path that holds Inspector output."""
    subjects = []
    for path in paths:
        if not inspector_files(path):
            continue
        summary = read_inspector([path])
        findings = summary.findings()
        check = CheckResult(
            id="inspector-outliers",
            title="NCCL Inspector: ranks against their peers",
            verdict=Verdict.WARN if findings else Verdict.PASS,
            cause="; ".join(findings)
            or f"no rank's median time is 1.25x from its peers' in {len(summary.rows)} collective/size rows",
            fix="prove it with `gpufabric isolate` on the named ranks' nodes beside healthy ones"
            if findings
            else "",
            evidence=[f"{len(summary.sources)} file(s), {summary.samples} operation(s), {summary.format}"],
        )
        subjects.append(
            SubjectReport(subject=f"inspector: {path.name}", sources=summary.sources, checks=[check])
        )
    return subjects
