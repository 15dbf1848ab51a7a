"""The published JSON Schema is up to date and validates real result documents."""

from __future__ import annotations

import jsonschema
import pytest

from gpufabric.results.model import Measurement, Row, RunMetadata, RunResult, Series
from gpufabric.results.schema import published_schema, render_schema, run_result_schema


def test_checked_in_schema_is_what_the_models_generate() -> None:
    from gpufabric.results.schema import SCHEMA_PATH

    assert SCHEMA_PATH.read_text(encoding="utf-8") == render_schema(), (
        "regenerate with: python -m gpufabric.results.schema --write"
    )


def test_schema_is_valid_draft_2020_12() -> None:
    jsonschema.Draft202012Validator.check_schema(published_schema())


def _document() -> dict[str, object]:
    m = Measurement(
        time_us=319.04,
        algbw_gbs=210.35,
        busbw_gbs=315.52,
        wrong=0,
        samples_us=[319.0, 319.1],
        iters_per_batch=20,
    )
    row = Row(size_bytes=64 << 20, count=16 << 20, dtype="float", redop="sum", in_place=m)
    result = RunResult(
        label="x",
        metadata=RunMetadata(backend="nccl", settings={"iters": 20}),
        series=[Series(collective="all_reduce", nranks=4, rows=[row])],
    )
    return result.model_dump(mode="json")


def test_a_result_document_validates_and_a_broken_one_does_not() -> None:
    validator = jsonschema.Draft202012Validator(run_result_schema())
    document = _document()
    validator.validate(document)
    document["series"][0]["rows"][0]["size_bytes"] = "big"  # type: ignore[index]
    with pytest.raises(jsonschema.ValidationError):
        validator.validate(document)
