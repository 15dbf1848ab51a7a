"""Every result judged against its own hardware (``gpufabric.analysis.expected``), on real captured runs:
the lent 4x H100 (NVLink A/B, virtual nodes), the 1x H100's virtual nodes, the 2x H200 nccl-tests raw
files, NCCL logs of public reports, a real gloo run here, and shapes detected from real-shaped sysfs
trees with captured ``nvidia-smi topo -m`` text (tests/fixtures/hardware/topo).
"""

from __future__ import annotations

import functools
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from gpufabric.analysis import compare_files
from gpufabric.analysis.doctor import Verdict, doctor
from gpufabric.analysis.expected import (
    CPU_NOTE,
    expect_run,
    given_shape,
    judge_run,
    partial_shape,
    run_setting,
    shapes_of_run,
)
from gpufabric.errors import UsageError
from gpufabric.expect import expect, judge, shape_from_instance
from gpufabric.hardware import NicBytes, NicKind, detect_node, load_snapshot
from gpufabric.hardware.attribution import HostTraffic
from gpufabric.nccl_logs.attest import attest_files
from gpufabric.report import Format, expected_lines, render_compare, render_run, report_from_files
from gpufabric.report.expected_lines import gbps
from gpufabric.results import SizeJudgement, read_result, write_result
from gpufabric.results.model import Device, Measurement, Row, RunMetadata, RunResult, Series
from gpufabric.results.readers import read_run

FIXTURES = Path(__file__).parents[1] / "fixtures"
H100X4_ON = FIXTURES / "gpu_h100x4" / "ab_nvlink" / "r0-fabric-on"
H100X4_OFF = FIXTURES / "gpu_h100x4" / "ab_nvlink" / "r0-fabric-off"
H100X4_VNODES = FIXTURES / "gpu_h100x4" / "vnodes_2x2"
H100X1_VNODES = FIXTURES / "gpu_h100x1" / "direct_2vnodes"
H200X2 = Path(__file__).parents[2] / "benchmarks" / "results" / "2026-11-27-h200x2" / "node-facts"
ELSEWHERE = "not-the-capture-host"  # the captures were made on hosts called "vm"; so is this CI machine


def _band_text(size: SizeJudgement) -> str:
    """``= 94% of expected 360 (band 303-450; ``: the model's figures at this size, as a line prints them
    (the calibration moves them; the tests check that the line carries the model's own)."""
    assert size.expected_gbps and size.band_low_gbps and size.band_high_gbps
    assert size.percent_of_expected == round(100 * size.measured_gbps / size.expected_gbps, 1)
    return (
        f"= {size.percent_of_expected:.0f}% of expected {gbps(size.expected_gbps)} "
        f"(band {gbps(size.band_low_gbps)}-{gbps(size.band_high_gbps)}; "
    )


def _top(result: RunResult) -> SizeJudgement:
    assert result.expected is not None
    top = result.expected.series[0].headline()
    assert top is not None
    return top


def _words(size: SizeJudgement) -> str:
    return size.verdict.replace("above-band", "above the band")


def _judged(run_dir: Path) -> tuple[RunResult, list[str]]:
    result = read_result(run_dir / "result.json")
    shapes = shapes_of_run(result, run_dir, environ={}, this_host=ELSEWHERE)
    judged = judge_run(result, shapes, shapes_from="the result")
    return result.model_copy(update={"expected": judged}), expected_lines(judged)


def test_a_result_without_snapshots_gives_a_partial_shape_that_names_what_it_lacks() -> None:
    result = read_result(H100X4_ON / "result.json")
    (shape,) = shapes_of_run(result, H100X4_ON, environ={}, this_host=ELSEWHERE).values()
    assert shape.gpus_per_node == 4 and shape.gpu_model == "H100"
    assert shape.nvlink is not None
    assert (shape.nvlink.links_per_gpu, shape.nvlink.link_gbytes_per_s, shape.nvlink.nvswitch) == (
        18,
        25.0,
        True,
    )
    assert "NICs: not in the result (no node snapshot was recorded)" in shape.notes
    assert "PCIe links: not in the result" in shape.notes


def test_4_h100_nvlink_is_judged_against_nvlink_with_its_band_and_formula() -> None:
    result, lines = _judged(H100X4_ON)
    top = _top(result)
    shape = shapes_of_run(result, H100X4_ON, environ={}, this_host=ELSEWHERE)["vm"]
    model = expect(shape, "all_reduce", 1, 256 << 20, ranks_per_node=4, nvls=False, ranks_per_process=1)
    assert model.band is not None and top.expected_gbps == model.band.centre_gbps
    assert top.verdict == judge(top.measured_gbps, model).verdict
    route = "NVLink 18 x 25 GB/s, ring, ceiling 450"
    assert lines == [f"expected: all_reduce 256 MB: 340 GB/s {_band_text(top)}{route}): {_words(top)}"]
    assert result.expected is not None
    (series,) = result.expected.series
    latency = [s for s in series.sizes if s.latency_regime]
    assert [s.size_bytes for s in latency] == [1 << 20, 2 << 20, 4 << 20, 8 << 20, 16 << 20, 32 << 20]
    assert all(s.verdict == "not-judged" for s in latency)
    table = render_run(result, "table")  # the table ends with the line, after every series block
    (line,) = [text for text in table.splitlines() if text.startswith("# expected:")]
    assert line == f"# {lines[0]}"
    shown = json.loads(render_run(result, "json"))["expected"]["series"][0]["sizes"][-1]
    assert (shown["verdict"], shown["expected_gbps"]) == (top.verdict, top.expected_gbps)


def test_forced_sockets_and_virtual_nodes_are_sockets_on_one_host_not_skipped() -> None:
    loopback = "sockets on one host over loopback (1 socket on the proxy thread)"
    off_result, off = _judged(H100X4_OFF)
    top = _top(off_result)
    head = f"expected: all_reduce 256 MB: 3.94 GB/s {_band_text(top)}"
    assert off == [f"{head}{loopback}, ring, no ceiling): {_words(top)}"]
    result, vnodes = _judged(H100X4_VNODES)
    assert run_setting(result, result.attestation).words() == (
        "2 nodes on 1 host (virtual nodes), 2 ranks per node, network socket in NCCL's log"
    )
    assert f"5.35 GB/s {_band_text(_top(result))}{loopback}, tree, no ceiling)" in vnodes[0]
    one, one_gpu = _judged(H100X1_VNODES)  # one H100, two ranks through MPS: the NET loopback, judged
    assert f"2.28 GB/s {_band_text(_top(one))}{loopback}, tree, no ceiling)" in one_gpu[0]


def _slowed(run_dir: Path, factor: float, into: Path) -> Path:
    """The captured run with every busbw times ``factor``: a shortfall of the same run, for the verdict
    rules (its NCCL attestation and layout unchanged)."""
    result = read_result(run_dir / "result.json")
    series = []
    for one in result.series:
        rows = []
        for row in one.rows:
            halves = {
                name: half.model_copy(update={"busbw_gbs": half.busbw_gbs * factor})
                for name in ("out_of_place", "in_place")
                if (half := getattr(row, name)) is not None
            }
            rows.append(row.model_copy(update=halves))
        series.append(one.model_copy(update={"rows": rows}))
    into.mkdir(parents=True)
    write_result(result.model_copy(update={"series": series}), into / "result.json")
    return into


def test_doctor_gives_a_verdict_with_no_instance_type(tmp_path: Path) -> None:
    slowed = _slowed(H100X4_OFF, 0.3, tmp_path / "slow-sockets")
    report = doctor([H100X4_ON, slowed])
    checks = {s.subject: {c.id: c for c in s.checks} for s in report.subjects}
    on = checks["fabric-on"]["busbw-expected:all_reduce"]
    assert on.verdict is Verdict.PASS
    top = _top(_judged(H100X4_ON)[0])
    assert on.cause.startswith(
        f"at 256 MB: 340 GB/s {_band_text(top)}NVLink 18 x 25 GB/s, ring, ceiling 450)"
    )
    assert "run: 1 node, 4 ranks per node" in on.evidence
    loopback = checks["fabric-off"]["busbw-expected:all_reduce"]
    assert "% of expected" in loopback.cause and "): below;" in loopback.cause
    assert loopback.verdict is Verdict.WARN  # no physical ceiling between ranks of one host: never FAIL
    assert loopback.cause.endswith(
        "no cause stands out: sockets between ranks of one host are bound by its CPUs"
    )
    assert "NCCL_SOCKET_NTHREADS" in loopback.fix


def test_doctor_on_a_launch_bound_shortfall_points_at_the_host(tmp_path: Path) -> None:
    # The 4x H100 NVLink run at a third of its busbw, every half launch-bound (the slowest host issuing
    # for 95% of each iteration): the shortfall's cause and fix are the host's, not the transports'.
    result = read_result(_slowed(H100X4_ON, 0.3, tmp_path / "slow") / "result.json")
    series = []
    for one in result.series:
        rows = []
        for row in one.rows:
            halves = {
                name: half.model_copy(update={"issue_us": half.time_us * 0.95})
                for name in ("out_of_place", "in_place")
                if (half := getattr(row, name)) is not None
            }
            rows.append(row.model_copy(update=halves))
        series.append(one.model_copy(update={"rows": rows}))
    write_result(result.model_copy(update={"series": series}), tmp_path / "slow" / "result.json")
    (check,) = [
        c
        for s in doctor([tmp_path / "slow"]).subjects
        for c in s.checks
        if c.id == "busbw-expected:all_reduce"
    ]
    assert "): below; cause: the GPUs waited for the hosts' calls, or nearly" in check.cause
    assert "bench --graph" in check.fix and "transport checks" not in check.fix


def test_doctor_on_the_2x_h200_raw_files_names_sockets_where_nvlink_was_expected() -> None:
    report = doctor([H200X2 / "nt-nvlink-all_reduce.txt", H200X2 / "nt-socket-all_reduce.txt"])
    nvlink, socket = ({c.id: c for c in s.checks}["busbw-expected:all_reduce"] for s in report.subjects)
    assert nvlink.verdict is Verdict.PASS and nvlink.cause.startswith("at 1 GB: 331 GB/s = ")
    assert "NVLink 18 x 25 GB/s, ring, ceiling 450): within" in nvlink.cause
    assert socket.verdict is Verdict.FAIL
    assert socket.cause.endswith(
        "): below; cause: NCCL's log shows the GPUs of one node talking through sockets (NET/Socket)"
    )


def test_the_h200_topology_gives_the_same_nvlink_as_the_result_alone(tmp_path: Path) -> None:
    """A shape detected from the 2x H200's captured ``nvidia-smi topo -m`` (on an empty sysfs: no NICs)
    knows NV18 but not the NVLink generation (NVML failed there): the ceiling is missing, not invented."""
    topo = (H200X2 / "topo-m.txt").read_text()
    snapshot = detect_node(
        environ={}, sysfs_root=tmp_path, metadata=False, topology_text=topo, read_gpus=False
    )
    result = read_run(H200X2 / "nt-nvlink-all_reduce.txt")
    judged = judge_run(result, {"vm": snapshot.shape}, shapes_from="snapshot")
    (series,) = judged.series
    assert series.ceiling_gbps is None and "NVLink per-link rate" in series.missing
    assert (
        expected_lines(judged)[0]
        == "expected: all_reduce 1 GB: 331 GB/s: not judged: unknown NVLink per-link rate"
    )


def test_a_run_on_this_host_is_judged_on_this_node_read_now(tmp_path: Path) -> None:
    """A CPU run whose host is this one: the shape is read from the node (here a real-shaped empty sysfs),
    and the model, which has no CPU path, says so in one note."""
    cpu = RunResult(
        label="gloo",
        metadata=RunMetadata(backend="gloo", hosts=["here"], world_size=2,
                             devices=[Device(rank=r, host="here", name="cpu") for r in range(2)]),
        series=[Series(collective="all_reduce", nranks=2, rows=[_row(256 << 20, 1.0)])],
    )  # fmt: skip
    read = functools.partial(detect_node, sysfs_root=tmp_path, read_gpus=False)
    shapes = shapes_of_run(cpu, None, environ={}, this_host="here", detect=read)
    assert shapes["here"].notes[0].startswith("read from this node now")
    judged = judge_run(cpu, shapes, shapes_from="this node")
    assert judged.series == [] and judged.notes == [CPU_NOTE]


def _row(size: int, busbw: float, traffic: list[HostTraffic] | None = None) -> Row:
    half = Measurement(time_us=1000.0, algbw_gbs=busbw, busbw_gbs=busbw)
    return Row(size_bytes=size, count=size // 4, dtype="float", redop="sum", out_of_place=half,
               traffic=traffic or [])  # fmt: skip


def _p4d_pair(busbw: float, traffic: list[HostTraffic] | None = None) -> RunResult:
    hosts = ["ip-10-0-1-11", "ip-10-0-1-12"]
    devices = [Device(rank=r, host=hosts[r // 8], name="NVIDIA A100-SXM4-40GB") for r in range(16)]
    return RunResult(
        label="p4d",
        metadata=RunMetadata(backend="nccl", hosts=hosts, world_size=16, devices=devices),
        series=[Series(collective="all_reduce", nranks=16, rows=[_row(1 << 30, busbw, traffic)])],
    )


def test_a_shortfall_on_one_of_four_efa_nics_names_the_nic_from_the_log() -> None:
    """SkyPilot-style 2x p4d.24xlarge whose NCCL log (a constructed log of a public report's shape) shows
    every channel on NET device 0 of 4: the cause comes from the log, not guessed."""
    att = attest_files([FIXTURES / "nccl_logs" / "constructed_efa_p4d_2node_1nic.log"])
    given = given_shape("p4d.24xlarge", None)
    judged = expect_run(_p4d_pair(20.0), environ={}, given=given, attestation=att)
    (series,) = judged.series
    size = series.sizes[-1]
    assert size.verdict == "below" and not size.causes_guessed
    assert "traffic on 1 of 4 NICs" in size.causes
    assert judged.shapes_from == "--instance-type p4d.24xlarge"


def test_nic_counters_show_one_of_four_nics_carrying_the_bytes() -> None:
    """The bytes each EFA device sent, as ``Row.traffic`` records them: one carried them all."""
    nics = tuple(NicBytes(name=f"rdmap{i}", kind=NicKind.EFA, tx_bytes=(8 << 30) if i == 0 else 0,
                          rx_bytes=0) for i in range(4))  # fmt: skip
    traffic = [HostTraffic(host=h, nics=nics, seconds=1.0, ranks=8) for h in ("ip-10-0-1-11", "ip-10-0-1-12")]
    judged = expect_run(_p4d_pair(20.0, traffic), environ={}, given=given_shape("p4d.24xlarge", None))
    size = judged.series[0].sizes[-1]
    assert size.verdict == "below" and "traffic on 1 of 4 NICs" in size.causes


def test_without_evidence_the_cause_is_a_likely_one_from_the_shape() -> None:
    shape = shape_from_instance("p4d.24xlarge")
    judged = judge_run(_p4d_pair(3.0), {"ip-10-0-1-11": shape, "ip-10-0-1-12": shape}, shapes_from="catalog")
    size = judged.series[0].sizes[-1]
    assert size.causes_guessed and size.causes == [
        "under 25% of the fabric ceiling: TCP sockets instead of RDMA"
    ]
    assert expected_lines(judged)[0].endswith(
        "): below; likely cause: under 25% of the fabric ceiling: TCP sockets instead of RDMA"
    )


def test_a_launch_bound_shortfall_names_the_host_not_the_fabric() -> None:
    """2x p4d at 1 GB reading a fifth of expected, where the slowest host took nearly all of each
    iteration to issue its call (``Measurement.issue_us``): the cause is the host, and it is certain."""
    run = _p4d_pair(20.0)
    row = run.series[0].rows[0]
    assert row.out_of_place is not None
    bound = row.model_copy(update={"out_of_place": row.out_of_place.model_copy(update={"issue_us": 950.0})})
    run = run.model_copy(update={"series": [run.series[0].model_copy(update={"rows": [bound]})]})
    judged = expect_run(run, environ={}, given=given_shape("p4d.24xlarge", None))
    size = judged.series[0].sizes[-1]
    assert size.verdict == "below" and not size.causes_guessed
    cause = "the GPUs waited for the hosts' calls, or nearly (950.0 us to issue each)"
    assert size.causes[0].startswith(cause)


RTX = "NVIDIA GeForce RTX 4090"


def test_unknown_hardware_names_the_fact_and_prints_no_number() -> None:
    run = RunResult(
        label="rtx",
        metadata=RunMetadata(backend="nccl", hosts=["box"], world_size=2,
                             devices=[Device(rank=r, host="box", index=r, name=RTX) for r in range(2)]),
        series=[Series(collective="all_reduce", nranks=2, rows=[_row(1 << 30, 20.0)])],
    )  # fmt: skip
    shape = partial_shape(run, "box")
    judged = judge_run(run, {"box": shape}, shapes_from="partial")
    (line,) = expected_lines(judged)
    assert line.startswith("expected: all_reduce 1 GB: 20.0 GB/s: not judged: unknown ")
    assert "% of" not in line and "band" not in line


def test_instance_type_and_snapshot_together_are_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="--instance-type and --snapshot both give the shape"):
        given_shape("p4d.24xlarge", tmp_path / "node.json")


def test_a_local_gloo_bench_says_the_model_has_no_cpu_path_and_keeps_it(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    done = subprocess.run(
        [sys.executable, "-m", "gpufabric.cli", "bench", "--ranks", "2", "-e", "512", "-f", "8",
         "--no-progress", "--run-dir", str(run_dir)],
        capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert f"# expected: {CPU_NOTE}" in done.stdout.splitlines()
    kept = read_result(run_dir / "result.json")
    assert kept.expected is not None and kept.expected.notes == [CPU_NOTE]
    shown = subprocess.run([sys.executable, "-m", "gpufabric.cli", "show", str(run_dir)],
                           capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert shown.stdout == done.stdout  # show prints what bench printed


def test_compare_puts_each_runs_percent_of_its_own_expected_beside_the_speedup() -> None:
    compared = compare_files([H100X4_ON, H100X4_OFF])
    (table,) = compared.comparison.tables
    last = table.rows[-1]
    on, off = (_top(_judged(run)[0]) for run in (H100X4_ON, H100X4_OFF))  # NVLink's expected, the sockets'
    assert last.of_expected == [on.percent_of_expected, off.percent_of_expected]
    assert table.rows[0].of_expected == [None, None]  # 1 MB: latency, not judged
    markdown = render_compare(compared.comparison, Format.MARKDOWN)
    on_label, off_label = table.labels  # the runs' own names (their directories, r0-fabric-on ...)
    assert f"| Speed-up | {on_label} % of expected | {off_label} % of expected |" in markdown
    last_line = [line for line in markdown.splitlines() if line.startswith("| 256 MB |")]
    assert last_line[0].endswith(f"| {on.percent_of_expected:.0f}% | {off.percent_of_expected:.0f}% |")


def _expected_table(page: str) -> list[dict[str, str]]:
    """The "Against expected" table as one {header: cell} per row."""
    section = page[page.index("<h2>Against expected</h2>") :]
    body = section[: section.index("</table>")]
    head = re.findall(r"<th>(.*?)</th>", body)
    rows = re.findall(r"<tr>(.*?)</tr>", body.split("<tbody>", 1)[1])
    return [dict(zip(head, re.findall(r"<td[^>]*>(.*?)</td>", row), strict=True)) for row in rows]


def test_the_against_expected_cells_sit_under_their_headers() -> None:
    """Each cell under its own header: the path under path, the verdict under verdict, GB/s under busbw
    (the header once listed size, busbw ... before path and verdict while the cells came the other way)."""
    rows = _expected_table(report_from_files([H100X4_ON, H100X4_VNODES]))
    assert len(rows) == 2
    on = rows[0]
    assert on["path"] == "NVLink 18 x 25 GB/s, ring"
    assert on["verdict"].split(";")[0] in ("within", "below", "above-band", "above-ceiling")
    assert float(on["busbw (GB/s)"]) > 100 and on["of expected"].endswith("%")
    assert on["size"].endswith("MB") or on["size"].endswith("GB")
    assert float(on["ceiling"]) == 450


def test_the_report_of_an_ab_judges_each_side_against_its_own_ceiling() -> None:
    """``report`` on a ``bench --ab`` directory whose sides carry no judgement (written before they did):
    fabric-on against NVLink's expected, fabric-off against the loopback sockets' band."""
    rows = _expected_table(report_from_files([FIXTURES / "gpu_h100x4" / "ab_nvlink"]))
    by_side = {row["run"]: row for row in rows}
    assert by_side["fabric-on"]["path"] == "NVLink 18 x 25 GB/s, ring"
    assert by_side["fabric-off"]["path"].startswith("sockets on one host over loopback")
    for row in rows:
        assert row["of expected"].endswith("%") and row["size"] == "256 MB", row


def test_the_html_report_has_an_against_expected_section() -> None:
    page = report_from_files([H100X4_ON, H100X4_VNODES])
    section = page[page.index("<h2>Against expected</h2>") :]
    assert "<td>NVLink 18 x 25 GB/s, ring</td>" in section
    percent = _top(_judged(H100X4_ON)[0]).percent_of_expected
    assert (
        f'<td class="num">{percent:.0f}%</td>' in section and "sockets on one host over loopback" in section
    )


H200X4 = Path(__file__).parents[2] / "benchmarks" / "results" / "2026-11-27-h200x4" / "model-run"
H200X4_SNAPSHOT = FIXTURES / "gpu_h200x4" / "node_snapshot.json"


def test_the_shapes_a_run_recorded_come_first(tmp_path: Path) -> None:
    """The 4x H200's real snapshot as a run records it (``RunMetadata.node_shapes``): used as it is,
    marked as the run's own snapshot, whatever host this is."""
    result = read_result(H200X4 / "b-socket-torch" / "result.json")
    shape = load_snapshot(H200X4_SNAPSHOT).shape
    recorded = result.model_copy(
        update={"metadata": result.metadata.model_copy(update={"node_shapes": {"vm": shape}})}
    )
    shapes = shapes_of_run(recorded, None, environ={}, this_host="vm")
    assert list(shapes) == ["vm"] and shapes["vm"].source == "snapshot"
    assert shapes["vm"].gpus == shape.gpus
    judged = expect_run(recorded, environ={})
    assert judged.shapes_from == "vm: the node snapshots the run recorded"
    (line,) = expected_lines(judged)  # the torch engine's forced-socket run, NIC counters on lo
    top = judged.series[0].headline()
    assert top is not None and line.startswith(f"expected: all_reduce 256 MB: 3.29 GB/s {_band_text(top)}")
    forced = "NCCL's Socket transport forced, network socket in NCCL's log"
    assert judged.setting == f"1 node, 4 ranks per node, {forced}"


def test_doctor_snapshot_judges_nccl_tests_output_on_the_captured_node() -> None:
    report = doctor([H200X4 / "nt-nvlink-all_reduce.txt"], snapshot=H200X4_SNAPSHOT)
    (check,) = [c for c in report.subjects[0].checks if c.id == "busbw-expected:all_reduce"]
    assert check.verdict is Verdict.PASS
    assert check.cause.startswith("at 1 GB: 357 GB/s = ")
    assert "NVLink 18 x 25 GB/s, ring, ceiling 450): within" in check.cause
    assert f"hardware: --snapshot {H200X4_SNAPSHOT}" in check.evidence
