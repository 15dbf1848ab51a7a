"""Golden files: every fixture read into a RunResult must equal its reviewed JSON under golden/.

To regenerate after a deliberate reader change (and review the diff):
    .venv/bin/python tests/results/test_readers_golden.py
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpufabric.results.model import RunResult
from gpufabric.results.readers import read_run

NCCL = Path(__file__).parents[1] / "fixtures" / "nccl_tests"
GOLDEN = NCCL / "golden"
INPUTS = sorted(p for p in NCCL.iterdir() if p.suffix in (".log", ".json"))


def _read(path: Path) -> RunResult:
    run = read_run(path)
    # the path differs between checkouts; the golden keeps the name only
    return run.model_copy(update={"metadata": run.metadata.model_copy(update={"source_path": path.name})})


@pytest.mark.parametrize("path", INPUTS, ids=lambda p: p.name)
def test_reader_output_matches_its_golden(path: Path) -> None:
    golden = GOLDEN / f"{path.name}.golden.json"
    expected = RunResult.model_validate(json.loads(golden.read_text()))
    assert _read(path) == expected


if __name__ == "__main__":
    GOLDEN.mkdir(exist_ok=True)
    for source in INPUTS:
        (GOLDEN / f"{source.name}.golden.json").write_text(_read(source).model_dump_json(indent=1) + "\n")
