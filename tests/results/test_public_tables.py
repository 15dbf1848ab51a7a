"""Tables copied from public issue threads read the way a careful human reads them.

Each ``tests/fixtures/nccl_tests/public/*.txt`` is a code block quoted in a GitHub thread (source URL in
its ``.expect.json``), kept verbatim: headerless rows, indented launcher tags, old layouts, tables cut
mid-row. The sidecar says what a human reads from it (collective, ranks, dtype, rows, busbw at one
size, whether the run is complete) or why it is not a table; the reader must agree, with no false claim.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gpufabric.errors import InputError
from gpufabric.results.readers import read_run

PUBLIC = Path(__file__).parents[1] / "fixtures" / "nccl_tests" / "public"
CASES = sorted(PUBLIC.glob("*.txt"))


def _expect(path: Path) -> dict[str, Any]:
    sidecar = json.loads(path.with_suffix(".expect.json").read_text(encoding="utf-8"))
    assert sidecar["source"].startswith("https://github.com/")
    expect: dict[str, Any] = sidecar["expect"]
    return expect


def test_the_corpus_is_all_there() -> None:
    assert len(CASES) >= 12
    assert all(p.with_suffix(".expect.json").exists() for p in CASES)


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_public_table_reads_as_a_human_reads_it(path: Path) -> None:
    expect = _expect(path)
    if not expect["table"]:
        with pytest.raises(InputError, match=expect["error"]):
            read_run(path)
        return
    run = read_run(path)
    assert len(run.series) == 1, [s.collective for s in run.series]
    series = run.series[0]
    if "collective_any_of" in expect:
        assert series.collective in expect["collective_any_of"]
    else:
        assert series.collective == expect["collective"]
    assert series.collective_inferred == expect["inferred"]  # a guess is never shown as a fact
    assert series.nranks == expect["nranks"]
    assert {r.dtype for r in series.rows} == {expect["dtype"]}
    assert len(series.rows) == expect["rows"]
    busbw = expect["busbw"]
    [row] = [
        r for r in series.rows if r.size_bytes == busbw["size"] and r.redop == busbw.get("redop", r.redop)
    ]
    measured = row.placement(busbw["placement"])
    assert measured is not None and measured.busbw_gbs == pytest.approx(busbw["value"])
    assert run.complete == expect["complete"]
    if "nccl_version" in expect:
        assert run.metadata.nccl_version == expect["nccl_version"]
    if series.collective_inferred or series.collective == "unknown":
        assert any(note.startswith(f"{series.collective}: ") for note in run.metadata.notes)
