"""``bench --self-test``: the catalog's expected figures for this node's shape next to the result, what
they mean for a loopback, and what it cannot prove; one line when the catalog has nothing.

No GPU here: the figures are checked on a real result of the mode (two virtual nodes on the lent H100,
tests/fixtures/gpu_h100x1/direct_2vnodes) and through the CLI's dry run, where ``CUDA_VISIBLE_DEVICES=0``
stands for this node's one GPU and ``--instance-type`` names the shape, as a user would.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpufabric.analysis.expected import with_expected
from gpufabric.bench.self_test import (
    CANNOT_PROVE,
    NOT_JUDGED,
    REFERENCE_MEANING,
    catalog_figures,
    self_test_lines,
)
from gpufabric.catalog import expected_busbw
from gpufabric.catalog.lookup import get_instance
from gpufabric.report.expected_lines import expected_lines
from gpufabric.results.io import read_result
from gpufabric.units import human_size

TWO_VNODE_RESULT = Path(__file__).parents[1] / "fixtures" / "gpu_h100x1" / "direct_2vnodes" / "result.json"


def test_measured_busbw_sits_beside_the_catalogs_figure_at_the_largest_covered_size() -> None:
    result = read_result(TWO_VNODE_RESULT)
    p4d = get_instance("p4d.24xlarge")
    (figure,) = catalog_figures(p4d, ["all_reduce"], [], result)
    rows = {row.size_bytes: row for row in result.series[0].rows}
    covered = [s for s in rows if expected_busbw("p4d.24xlarge", "all_reduce", 2, s) is not None]
    assert figure.size_bytes == max(covered)
    row = rows[figure.size_bytes]
    placement = row.out_of_place or row.in_place
    assert placement is not None and figure.measured_gbps == placement.busbw_gbs
    assert figure.baseline == expected_busbw("p4d.24xlarge", "all_reduce", 2, figure.size_bytes)

    lines = self_test_lines(p4d, ["all_reduce"], [], result)
    assert lines[0] == "self-test: the catalog's expected figures for p4d.24xlarge (efa, 4 NICs):"
    base = figure.baseline
    percent = 100 * placement.busbw_gbs / base.busbw_gbps
    assert lines[1].startswith(
        f"  all_reduce at {human_size(figure.size_bytes)}: {placement.busbw_gbs:.2f} GB/s busbw here "
        f"(loopback), {percent:.0f}% of the catalog {base.busbw_gbps:.2f} GB/s busbw"
    )
    assert "SkyPilot's EFA guide" in lines[1]  # the public source, never a seed file's name
    assert lines[2:] == [f"  {REFERENCE_MEANING}", CANNOT_PROVE]


def test_no_shape_and_no_curve_are_one_line_each() -> None:
    result = read_result(TWO_VNODE_RESULT)
    assert self_test_lines(None, ["all_reduce"], [], result) == [NOT_JUDGED, CANNOT_PROVE]
    p5 = get_instance("p5.48xlarge")  # in the catalog, but nobody published a 2-node curve for it
    lines = self_test_lines(p5, ["all_reduce"], [], result)
    assert lines == [
        "self-test: no catalog figure: the catalog has no 2-node busbw for p5.48xlarge (all_reduce) at "
        "the swept sizes",
        CANNOT_PROVE,
    ]


def test_without_instance_type_the_verdict_comes_from_the_nodes_own_shape() -> None:
    """The lent 1x H100's two virtual nodes (one GPU shared through MPS) judged as NCCL's sockets between
    ranks of one host: a verdict, not "pass --instance-type"."""
    result = read_result(TWO_VNODE_RESULT)
    judged = with_expected(result, TWO_VNODE_RESULT.parent, environ={})
    assert judged.expected is not None
    lines = self_test_lines(None, ["all_reduce"], [], judged, expected_lines(judged.expected), "partial")
    assert lines[0] == "self-test: against this node's own shape (partial):"
    top = judged.expected.series[0].headline()
    assert top is not None and top.percent_of_expected is not None
    assert lines[1].startswith(
        f"  expected: all_reduce 256 MB: 2.28 GB/s = {top.percent_of_expected:.0f}% of"
    )
    assert "sockets on one host over loopback" in lines[1] and top.verdict in lines[1].split("): ")[1]
    assert lines[-1] == CANNOT_PROVE


def _self_test(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "gpufabric.cli", "bench", "--self-test", "--dry-run", *args,
               "--run-dir", str(tmp_path / "run")]  # fmt: skip
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "0"}
    return subprocess.run(command, capture_output=True, text=True, timeout=180, check=False, env=env)


def test_dry_run_names_the_expected_figure_for_the_shape_given(tmp_path: Path) -> None:
    done = _self_test(["--instance-type", "p4d.24xlarge", "-b", "1M", "-e", "64M", "-f", "4"], tmp_path)
    assert done.returncode == 0, done.stderr
    base = expected_busbw("p4d.24xlarge", "all_reduce", 2, 64 << 20)
    assert base is not None
    assert f"  all_reduce at 64 MB: catalog {base.busbw_gbps:.2f} GB/s busbw" in done.stderr
    assert CANNOT_PROVE in done.stderr
    assert "NCCL_HOSTID" in done.stdout  # the plan itself: two virtual nodes


@pytest.mark.parametrize(
    ("args", "code", "line"),
    [
        ([], 0, "self-test: the result will be judged against this node's own shape"),
        (
            ["--instance-type", "p4d.24"],
            2,
            "Error: instance type 'p4d.24' is not in the catalog; did you mean",
        ),
    ],
)
def test_without_a_known_shape_it_says_so(tmp_path: Path, args: list[str], code: int, line: str) -> None:
    done = _self_test(args, tmp_path)
    assert done.returncode == code, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len([text for text in lines if text.startswith(line)]) == 1
    if code == 2:  # refused before anything is planned: the one line is all there is
        assert len(lines) == 1
