"""The public corpus: real NCCL (and HCCL) logs copied verbatim from public issue threads, each with a sidecar
``<name>.yaml`` saying where it comes from and what a careful human reads in it. The suite fails on any
false claim: a claim whose value or confidence differs from the reading, a phrase the reading rules out,
a check verdict the reading does not allow, or one of the evidence rules below broken on any log.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpufabric.analysis.doctor import SubjectReport, Verdict, diagnose, load_evidence, resolve_expectation
from gpufabric.errors import InputError
from gpufabric.nccl_logs.claims import multi_host

PUBLIC = Path(__file__).parents[1] / "fixtures" / "nccl_logs" / "public"
CASES = sorted(PUBLIC.glob("*.yaml"))


def _reading(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(path.read_text())
    return data


def _texts(report: SubjectReport) -> list[str]:
    texts = [text for check in report.checks for text in (check.cause, check.fix, *check.evidence)]
    if report.attestation:
        texts += [claim.note for _name, claim in report.attestation.items()]
    return texts


def test_the_corpus_is_large_and_sourced() -> None:
    assert len(CASES) >= 40
    for case in CASES:
        reading = _reading(case)
        assert reading["source"].startswith("https://github.com/"), case.name
        assert reading["reads"].strip(), case.name
        assert case.with_suffix(".log").is_file(), case.name


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_no_false_claim(case: Path) -> None:
    reading = _reading(case)
    log = case.with_suffix(".log")
    wanted = reading.get("doctor") or {}
    if "refused_with" in wanted:
        with pytest.raises(InputError, match=wanted["refused_with"]):
            load_evidence([log])
        return
    expectation = resolve_expectation(wanted.get("expect"), None)
    (evidence,) = load_evidence([log])
    report = diagnose(evidence, expectation)
    att = evidence.attestation
    assert att is not None and report.attestation is not None

    for name, expected in (reading.get("claims") or {}).items():
        claim = getattr(report.attestation, name)
        assert (claim.value, claim.confidence) == (expected["value"], expected["confidence"]), (name, claim)
        if claim.confidence == "proven" and claim.value is not None:
            assert claim.lines, f"{name}: a proven claim quotes the lines that prove it"

    verdicts = {check.id: check.verdict.value for check in report.checks}
    for check_id, allowed in (wanted.get("verdicts") or {}).items():
        assert verdicts[check_id] in allowed, (check_id, verdicts[check_id], report.checks)
    assert report.verdict.value not in wanted.get("overall_not", []), report.verdict

    texts = _texts(report)
    for phrase in wanted.get("never_say", []):
        assert not [t for t in texts if phrase in t], phrase

    # Evidence rules that hold on every log.
    if not multi_host(att) and len(evidence.hosts) <= 1:
        said = [t for t in texts if re.search(r"(?:used|sockets) .*between nodes", t)]
        assert not said, "'between nodes' said of a log that shows one host and no network channel"
    if att.net_plugin_refused:
        assert not [t for t in texts if "plugin is in use" in t]
    if att.proofs.get("plugin_loaded") or att.proofs.get("plugin_own"):
        assert not [t for t in texts if "says nothing about a net plugin" in t]
    nvlink = expectation.fabric is not None and expectation.fabric.value == "nvlink"
    if nvlink and not ({"p2p", "nvls"} & set(att.transport_kinds)) and not att.nvls:
        assert report.verdict is not Verdict.PASS, "--expect nvlink passed without a P2P/NVLS link"
    if report.verdict is Verdict.PASS:
        assert any(
            c.verdict is Verdict.PASS and c.id in ("fabric-in-use", "intra-node") for c in report.checks
        )
