"""The size curve: busbw(S) = plateau x S / (S + S_half), S_half fitted on the corpus' series; the 4x H200
runs the fit did not see (held out) against it at every size measured, 256 MB - 1 GB."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpufabric.expect import default_calibration, expect, judge, load_shape
from gpufabric.expect.size_curve import fit_half_size, plateau_factor
from gpufabric.results.readers import read_run

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "benchmarks/results/2026-11-27-h200x4/model-run"
SHAPE = load_shape(ROOT / "tests/fixtures/gpu_h200x4/node_snapshot.json")
MIB = 1 << 20
COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast")


def test_the_fit_recovers_an_alpha_beta_curve_exactly() -> None:
    plateau, half = 360.0, 17 * MIB
    points = [(size, plateau * size / (size + half)) for size in (64 * MIB, 256 * MIB, 1024 * MIB)]
    fitted = fit_half_size(points)
    assert fitted is not None and abs(fitted - half) / half < 1e-9


def test_one_size_has_no_curve_and_a_flat_series_has_no_rise() -> None:
    assert fit_half_size([(256 * MIB, 3.0)]) is None
    assert fit_half_size([(64 * MIB, 4.09), (256 * MIB, 3.98)]) == 0.0  # 4 vnodes: does not rise
    assert plateau_factor(None, 16 * MIB) == 1.0 and plateau_factor(256 * MIB, None) == 1.0


def test_the_centre_rises_with_size_towards_the_plateau() -> None:
    centres = [expect(SHAPE, "all_reduce", 1, size).band for size in (64 * MIB, 256 * MIB, 1 << 30, None)]
    assert all(band is not None for band in centres)
    values = [band.centre_gbps for band in centres if band is not None]
    assert values == sorted(values) and values[0] < values[-1]
    plateau = centres[-1]
    assert plateau is not None and plateau.centre_gbps == plateau.plateau_centre_gbps
    assert plateau.half_size_bytes and plateau.half_size_bytes > MIB


def test_nvls_rows_are_fitted_as_nvls_not_as_ring() -> None:
    ring = default_calibration().band_for("nvlink/ring/all_reduce")
    nvls = default_calibration().band_for("nvlink/nvls/all_reduce")
    assert ring is not None and nvls is not None
    assert "h200-8gpu-1n-all_reduce-nvls" in nvls.fitted_on
    assert not any(name.endswith("-nvls") for name in ring.fitted_on)


def test_all_gather_and_reduce_scatter_sit_below_all_reduce_on_nvlink_by_the_fit() -> None:
    centre = {c: expect(SHAPE, c, 1, 256 * MIB).band for c in ("all_reduce", "all_gather", "reduce_scatter")}
    reduce, gather, scatter = (centre[c] for c in ("all_reduce", "all_gather", "reduce_scatter"))
    assert reduce is not None and gather is not None and scatter is not None
    assert gather.group == "nvlink/ring/all_gather/3-or-more-gpus"
    assert scatter.group == "nvlink/ring/reduce_scatter/3-or-more-gpus"
    assert gather.centre_gbps < reduce.centre_gbps and scatter.centre_gbps < reduce.centre_gbps


@pytest.mark.parametrize("collective", COLLECTIVES)
def test_held_out_4x_h200_nvlink_inside_and_centre_within_10_percent(collective: str) -> None:
    ids = default_calibration().band_for(f"nvlink/ring/{collective}")
    assert ids is not None and not any("mpirun" in i for i in ids.fitted_on)  # the fit never saw the run
    rows = read_run(RUN / f"nt-nvlink-{collective}.txt").series[0].rows
    assert {row.size_bytes for row in rows} == {256 * MIB, 512 * MIB, 1024 * MIB}
    for row in rows:
        assert row.out_of_place is not None
        measured = row.out_of_place.busbw_gbs
        expectation = expect(SHAPE, collective, 1, row.size_bytes)  # type: ignore[arg-type]
        assert judge(measured, expectation).verdict == "within"
        assert expectation.band is not None
        assert abs(expectation.band.centre_gbps - measured) / measured <= 0.10


@pytest.mark.parametrize("collective", ["all_gather", "reduce_scatter"])
def test_two_gpus_are_a_level_of_their_own_and_the_held_out_size_is_inside(collective: str) -> None:
    """2x H200: all_gather and reduce_scatter 15-20% below the 4- and 8-GPU band. The 2-GPU level is
    fitted on the run's 256 MB and 1 GB rows; its 512 MB row, held out, must fall inside."""
    two = SHAPE.model_copy(update={"gpus": SHAPE.gpus[:2], "gpu_count": 2})
    band = expect(two, collective, 1, 512 * MIB).band  # type: ignore[arg-type]
    four = expect(SHAPE, collective, 1, 512 * MIB).band  # type: ignore[arg-type]
    assert band is not None and four is not None
    assert band.group == f"nvlink/ring/{collective}/2-gpus" and band.centre_gbps < four.low_gbps
    assert not any("512m" in figure for figure in band.fitted_on)
    run = ROOT / "benchmarks/results/2026-11-27-h200x2/node-facts"
    row = next(
        r for r in read_run(run / f"nt-nvlink-{collective}.txt").series[0].rows if r.size_bytes == 512 * MIB
    )
    assert row.out_of_place is not None
    assert judge(row.out_of_place.busbw_gbs, expect(two, collective, 1, 512 * MIB)).verdict == "within"  # type: ignore[arg-type]
