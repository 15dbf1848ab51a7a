"""``ab.json`` has one model: the results layer's ``ABDocument`` (what was measured, for show, compare and
report), which the judge's ``ABReport`` extends with its judgement. On every real A/B kept as a fixture,
the document read alone and the full report must agree on fabric, verdict and measurements, and the
document must be the report's own base, not a copy of its fields."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpufabric.analysis.ab_judge import ABReport
from gpufabric.results.readers import ABDocument, sniff_ab_document

FIXTURES = Path(__file__).parents[1] / "fixtures"
REAL_AB = sorted(FIXTURES.glob("gpu_*/*/ab.json"))


def test_the_real_ab_documents_are_found() -> None:
    assert {p.parent.name for p in REAL_AB} >= {"ab_2vnodes", "ab_nvlink"}


def test_the_report_is_the_document_plus_its_judgement() -> None:
    assert issubclass(ABReport, ABDocument)
    assert set(ABDocument.model_fields) == {"fabric", "runs", "verdict"} <= set(ABReport.model_fields)


@pytest.mark.parametrize("path", REAL_AB, ids=lambda p: p.parent.name)
def test_both_views_of_an_ab_document_agree(path: Path) -> None:
    document = sniff_ab_document(path)
    report = ABReport.model_validate(json.loads(path.read_text()))
    assert document is not None
    assert document.fabric == report.fabric and document.verdict == report.verdict
    for mine, theirs in ((document.on, report.runs.on), (document.off, report.runs.off)):
        assert [s.collective for s in mine.series] == [s.collective for s in theirs.series]
        for a, b in zip(mine.series, theirs.series, strict=True):
            assert [(r.size_bytes, r.out_of_place, r.in_place) for r in a.rows] == [
                (r.size_bytes, r.out_of_place, r.in_place) for r in b.rows
            ]
