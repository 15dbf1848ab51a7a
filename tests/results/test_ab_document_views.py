"""``ab.json`` has two readers: the results layer's ``ABDocument`` (what was measured, for show, compare
and report) and the judge's own ``ABReport`` (results may not import analysis). On every real A/B kept
as a fixture, both must read the same fabric, verdict and measurements."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpufabric.analysis.ab_judge import ABReport
from gpufabric.results.readers import sniff_ab_document

FIXTURES = Path(__file__).parents[1] / "fixtures"
REAL_AB = sorted(FIXTURES.glob("gpu_*/*/ab.json"))


def test_the_real_ab_documents_are_found() -> None:
    assert {p.parent.name for p in REAL_AB} >= {"ab_2vnodes", "ab_nvlink"}


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
