"""The calibration corpus: a strict loader, and every healthy figure inside its band (the fitted ones and
the held-out ones reported apart), every degraded one flagged with its cause."""

from __future__ import annotations

import pytest

from gpufabric.errors import InputError
from gpufabric.expect import default_calibration, judge, load_published, parse_published
from gpufabric.expect.calibration import band_from_bytes, figure_situation
from gpufabric.expect.holdout import figure_expectation

FIGURES = load_published()
HEALTHY = [f for f in FIGURES if f.health == "healthy"]
FITTED = [f for f in HEALTHY if not f.holdout]
HELD_OUT = [f for f in HEALTHY if f.holdout]
DEGRADED = [f for f in FIGURES if f.health == "degraded"]
ENTRY = """
- id: x
  url: https://example.org/table
  source: "a guide"
  gpu: A100
  gpus_per_node: 8
  nodes: 2
  nics: {kind: efa, count: 4, rate_gbps: 100}
  path: net
  collective: all_reduce
  size_bytes: 1073741824
  busbw_gbps: 70.0
  health: healthy
"""


def test_the_corpus_has_fitted_held_out_and_degraded_figures() -> None:
    assert FITTED and HELD_OUT and DEGRADED
    assert default_calibration().bands


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ("  colour: blue\n", "colour: Extra inputs are not permitted"),
        ("  cause: one-nic\n", "a healthy figure has no cause"),
        ("", None),
    ],
)
def test_the_loader_is_strict(change: str, words: str | None) -> None:
    if words is None:
        assert parse_published(ENTRY)[0].id == "x"
        return
    with pytest.raises(InputError, match=words):
        parse_published(ENTRY + change)


def test_duplicate_ids_bad_urls_and_non_lists_are_one_line_each() -> None:
    with pytest.raises(InputError, match="appears twice"):
        parse_published(ENTRY + ENTRY)
    with pytest.raises(InputError, match="url: Value error, 'ftp://x' is neither"):
        parse_published(ENTRY.replace("https://example.org/table", "ftp://x"))
    with pytest.raises(InputError, match="expected a list of figures"):
        parse_published("id: x\n")
    with pytest.raises(InputError, match="names its cause"):
        parse_published(ENTRY.replace("health: healthy", "health: degraded"))


def _inside(figure_id: str) -> None:
    figure = next(f for f in FIGURES if f.id == figure_id)
    expectation = figure_expectation(figure)
    assert figure.size_bytes >= band_from_bytes(figure_situation(figure).path)
    assert expectation.band is not None, expectation.missing
    assert expectation.path is figure.path
    verdict = judge(figure.busbw_gbps, expectation)
    assert verdict.verdict == "within", verdict.message


@pytest.mark.parametrize("figure_id", [f.id for f in FITTED])
def test_every_fitted_healthy_figure_is_inside_its_band(figure_id: str) -> None:
    _inside(figure_id)


@pytest.mark.parametrize("figure_id", [f.id for f in HELD_OUT])
def test_every_held_out_healthy_figure_is_inside_its_band(figure_id: str) -> None:
    _inside(figure_id)


@pytest.mark.parametrize("figure_id", [f.id for f in DEGRADED])
def test_every_degraded_figure_is_below_with_its_cause_among_the_likely_ones(figure_id: str) -> None:
    figure = next(f for f in DEGRADED if f.id == figure_id)
    verdict = judge(figure.busbw_gbps, figure_expectation(figure))
    assert verdict.verdict == "below"
    assert figure.cause in verdict.causes, verdict.message
