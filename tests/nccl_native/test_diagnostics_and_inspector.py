"""NCCL DIAG lines (NCCL 2.31's init and RAS diagnostics) and the Inspector plugin's output, read from the
examples NCCL's user guide and the plugin's README publish (tests/fixtures/nccl_native/SOURCES.md), from
the Inspector's JSON dumps of a real job on 4x H200 (captures.py), and, for a failed P2P edge (no GPU
machine failed one for us to capture), from report lines built with p2p.cc's formats."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from gpufabric.errors import InputError
from gpufabric.nccl_native import diagnostics_note, has_diagnostics, read_diagnostics, read_inspector

sys.path.insert(0, str(Path(__file__).parent))
from captures import CAPTURED

FIXTURES = Path(__file__).parents[1] / "fixtures" / "nccl_native"
# ncclDiagP2pFormatPeerFields + ncclDiagP2pReport's write-mismatch format (src/diagnostics/p2p.cc, v2.31.2-1)
FIELDS = "srcRank=%d srcCudaDev=%d srcNvmlDev=%d dstRank=%d dstCudaDev=%d dstNvmlDev=%d path=%s handle=%s"
WRITE_MISMATCH = "NCCL DIAG [INFO] p2p: write mismatch %s expected=0x%016x got=0x%016x verify=0x%016x; %s"
SUMMARY_PARTIAL = "NCCL DIAG [INFO] p2p: %s directed GPU P2P edges verified"
ADVICE = "check the single-node NVLink topology and peer-access state with 'nvidia-smi topo -m'"


def test_guide_lines() -> None:
    report = read_diagnostics((FIXTURES / "diag_guide.txt").read_text().splitlines())
    assert len(report.lines) == 13
    [mismatch] = report.env_mismatches
    assert (mismatch.comm, mismatch.name) == ("0x1234", "NCCL_DEBUG")
    assert mismatch.values == {"INFO": "{0,1,2,3}", "WARN": "{4,5,6,7}"}
    assert any(f.startswith("net bw: cross-nic rank 3") for f in report.findings)
    assert report.completed == ["RAS diagnostics completed in 12.3 ms across 8 RAS peers"]
    assert not report.clean()


def test_p2p_failure_names_the_pair() -> None:
    fields = FIELDS % (1, 1, 1, 2, 2, 2, "NVL", "CUMEM_POSIX_FD")
    lines = [
        "[1,0]<stdout>:gpu7:811 NCCL DIAG === NCCL Diagnostics ===",
        "[1,0]<stdout>:gpu7:811 " + WRITE_MISMATCH % (fields, 0xD1A6000100020000, 0, 0, ADVICE),
        "[1,0]<stdout>:gpu7:811 " + SUMMARY_PARTIAL % "11/12",
        "[1,0]<stdout>:gpu7:811 NCCL DIAG NCCL diagnostics completed in 245.3 ms across 4 ranks",
    ]
    report = read_diagnostics(lines)
    [failure] = report.p2p_failures
    assert failure.pair() == "rank 1 (GPU 1) -> rank 2 (GPU 2)"
    assert (failure.what, failure.path, failure.advice) == ("write mismatch", "NVL", ADVICE)
    assert (report.p2p_passed, report.p2p_tested) == (11, 12) and not report.clean()


@pytest.mark.parametrize(
    ("version", "has"), [("2.28.9", False), ("2.30.7+cuda12.9", False), ("2.31.2", True), (None, False)]
)
def test_version_gate(version: str | None, has: bool) -> None:
    assert has_diagnostics(version) is has
    assert (diagnostics_note(version) == "") is has


def test_inspector_json_guide_examples() -> None:
    summary = read_inspector([FIXTURES / "example-hostname-pid1639453.log"])
    assert summary.samples == 2 and summary.format == "json"
    assert [(r.collective, r.size) for r in summary.rows] == [
        ("AllReduce", "17179869184"),
        ("ReduceScatter", "2147483648"),
    ]
    assert summary.rows[0].ranks[0].rank == "rank 2" and summary.rows[0].median_time_us == 61974


def test_inspector_prometheus_guide_lines() -> None:
    summary = read_inspector([FIXTURES / "nccl_inspector_metrics_guide.prom"])
    rows = {(r.collective, r.size): r for r in summary.rows}
    allreduce = rows[("AllReduce", "4-5GB")]
    assert allreduce.median_busbw_gbps == pytest.approx(678.263)
    assert allreduce.median_time_us == pytest.approx(9498.47)
    assert rows[("Send", "512-513MB")].ranks[0].rank == "nvl72004-T01/GPU0"


def test_inspector_names_a_rank_far_from_its_peers() -> None:
    # The plugin (v2.28.9-1) on a 4-rank all_reduce job, 1 MB to 64 MB: rank 3 ran its small collectives
    # at about 2.5x its peers' median time (doctor WARN inspector-outliers on the GPU machine too).
    summary = read_inspector([CAPTURED / "inspector-json"])
    assert summary.format == "json" and summary.samples == 406
    rows = {(r.collective, r.size): r for r in summary.rows}
    assert len(rows[("AllReduce", "1048576")].ranks) == 4
    assert [o.split(":")[0] for o in rows[("AllReduce", "1048576")].outliers] == ["rank 3 on vm"]
    assert "2.47x the ranks' median time" in rows[("AllReduce", "1048576")].outliers[0]
    assert rows[("AllReduce", "67108864")].outliers == []


def test_inspector_nothing_there(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no Inspector output"):
        read_inspector([tmp_path])


@pytest.mark.parametrize("name", ["metrics.prom", "vm-pid12.log"])
def test_a_file_named_like_the_plugins_without_its_records_is_one_line(tmp_path: Path, name: str) -> None:
    (tmp_path / name).write_text("hello\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"no Inspector record in it|not Inspector JSON"):
        read_inspector([tmp_path / name])


def test_show_and_doctor_read_an_inspector_dump(tmp_path: Path) -> None:

    from typer.testing import CliRunner

    from gpufabric.analysis.doctor import Verdict, doctor
    from gpufabric.cli.app import app

    for name in ("example-hostname-pid1639453.log", "nccl_inspector_metrics_guide.prom"):
        shutil.copy(FIXTURES / name, tmp_path / name)
    shown = CliRunner().invoke(app, ["show", str(tmp_path)])
    assert shown.exit_code == 0 and "NCCL Inspector: 4 operation(s) from 2 file(s)" in shown.output
    [subject] = doctor([tmp_path]).subjects
    assert subject.checks[0].id == "inspector-outliers" and subject.verdict is Verdict.PASS
    [real] = doctor([CAPTURED / "inspector-json"]).subjects
    assert real.verdict is Verdict.WARN and "AllReduce 1048576: rank 3 on vm: 2.47x" in real.checks[0].cause


def test_a_job_directory_with_logs_beside_the_dump_is_also_a_run(tmp_path: Path) -> None:
    from gpufabric.analysis.doctor.inspector_subject import only_inspector

    dump = tmp_path / "dump"
    dump.mkdir()
    shutil.copy(FIXTURES / "example-hostname-pid1639453.log", dump)
    assert only_inspector(tmp_path) and only_inspector(dump / "example-hostname-pid1639453.log")
    (tmp_path / "nccl.host.1.log").write_text("host:1:1 [0] NCCL INFO NCCL version 2.28.9+cuda12.9\n")
    assert not only_inspector(tmp_path)
