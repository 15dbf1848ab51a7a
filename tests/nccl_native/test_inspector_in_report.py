"""``gpufabric report`` embeds NCCL's Inspector output: a run directory that holds the plugin's dump gets
the summary ``show`` prints (per collective and size, each rank's median time and busbw), and a dump
given alone is a report of its own. The dumps are the examples NCCL's user guide and the plugin's README
publish (tests/fixtures/nccl_native/SOURCES.md)."""

from __future__ import annotations

import shutil
from pathlib import Path

from gpufabric.report.html import report_from_files
from gpufabric.results import write_result
from gpufabric.results.model import Measurement, Row, RunMetadata, RunResult, Series

FIXTURES = Path(__file__).parents[1] / "fixtures" / "nccl_native"
DUMPS = ("example-hostname-pid1639453.log", "nccl_inspector_metrics_guide.prom")


def _bench_run(directory: Path) -> Path:
    half = Measurement(time_us=10.0, algbw_gbs=1.0, busbw_gbs=1.5, wrong=0)
    row = Row(
        size_bytes=1024, count=256, dtype="float", redop="sum", root=-1, out_of_place=half, in_place=half
    )
    run = RunResult(label="job", metadata=RunMetadata(engine="gpufabric"),
                    series=[Series(collective="all_reduce", nranks=2, rows=[row])])  # fmt: skip
    directory.mkdir(parents=True)
    write_result(run, directory / "result.json")
    return directory


def test_a_run_directory_holding_a_dump_shows_it_in_the_report(tmp_path: Path) -> None:
    run_dir = _bench_run(tmp_path / "job")
    for name in DUMPS:
        shutil.copy(FIXTURES / name, run_dir / name)
    html = report_from_files([run_dir])
    assert "<h2>NCCL Inspector: job</h2>" in html
    assert "NCCL Inspector: 4 operation(s) from 2 file(s)" in html
    assert "AllReduce" in html and "4-5GB" in html  # the Prometheus bucket beside the JSON sizes
    assert "<h2>Runs</h2>" in html  # the run itself is still there


def test_a_dump_alone_is_a_report(tmp_path: Path) -> None:
    dump = tmp_path / "inspector"
    dump.mkdir()
    shutil.copy(FIXTURES / DUMPS[0], dump / DUMPS[0])
    html = report_from_files([dump])
    assert "NCCL Inspector: 2 operation(s) from 1 file(s)" in html and "<h2>Runs</h2>" not in html


def test_a_run_without_a_dump_has_no_inspector_section(tmp_path: Path) -> None:
    assert "NCCL Inspector" not in report_from_files([_bench_run(tmp_path / "job")])
