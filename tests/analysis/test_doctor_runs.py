"""The doctor judges each run on its own: logs of different runs are never merged into one subject, a
partial log never claims a node count it does not show, and one host cannot attest an inter-node fabric.

Fixtures: the real 4x H200 captures and the constructed EFA logs of ``tests/fixtures/nccl_logs`` (see
SOURCES.md there); per-rank files are cut from the whole-run logs by their mpirun ``[1,N]`` prefix, which is
how NCCL_DEBUG_FILE would have written them.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from gpufabric.analysis.doctor import CheckResult, DoctorReport, Verdict, doctor, load_evidence
from gpufabric.analysis.doctor.runs import group_runs

LOGS = Path(__file__).resolve().parents[1] / "fixtures" / "nccl_logs"
GOOD_EFA = LOGS / "constructed_efa_p4d_2node_4nics.log"
ONE_EFA = LOGS / "constructed_efa_p4d_2node_1nic.log"
SOCKET_FALLBACK = LOGS / "constructed_efa_plugin_missing_socket_2node.log"


def check(report: DoctorReport, check_id: str, subject: int = 0) -> CheckResult:
    matches = [c for c in report.subjects[subject].checks if c.id == check_id]
    assert matches, f"no check {check_id}"
    return matches[0]


def split_by_rank(log: Path, into: Path) -> list[Path]:
    """One file per rank, as NCCL_DEBUG_FILE=nccl.%h.%p.log writes them (lines without a rank prefix go
    with rank 0, as mpirun's first process prints the bare version line)."""
    into.mkdir(parents=True, exist_ok=True)
    per_rank: dict[str, list[str]] = {}
    for line in log.read_text(encoding="utf-8").splitlines(keepends=True):
        rank = line[3 : line.index("]")] if line.startswith("[1,") else "0"
        per_rank.setdefault(rank, []).append(line)
    files = []
    for rank, lines in per_rank.items():
        path = into / f"nccl.rank{int(rank):02d}.log"
        path.write_text("".join(lines), encoding="utf-8")
        files.append(path)
    return files


# --- different runs are different subjects -----------------------------------------------------------


def test_good_efa_log_does_not_hide_another_runs_socket_fallback() -> None:
    report = doctor([GOOD_EFA, SOCKET_FALLBACK], expect="efa")
    assert [s.subject for s in report.subjects] == [GOOD_EFA.stem, SOCKET_FALLBACK.stem]
    assert check(report, "fabric-in-use", 0).verdict is Verdict.PASS
    fallback = check(report, "fabric-in-use", 1)
    assert fallback.verdict is Verdict.FAIL and fallback.cause.startswith("silent fallback to TCP sockets")
    assert report.verdict is Verdict.FAIL and report.exit_code() == 1


def test_two_whole_run_captures_with_the_same_commid_hosts_and_pids_stay_apart() -> None:
    # The two constructed runs reuse commId, hosts and pids; each file holds all 16 ranks, so the same rank
    # logged twice proves two runs.
    report = doctor([GOOD_EFA, ONE_EFA], instance_type="p4d.24xlarge")
    assert len(report.subjects) == 2
    assert check(report, "nic-count", 0).verdict is Verdict.PASS
    assert "1 of the 4 efa NICs" in check(report, "nic-count", 1).cause


def test_per_rank_files_of_one_run_are_one_subject(tmp_path: Path) -> None:
    files = split_by_rank(GOOD_EFA, tmp_path / "run")
    assert len(files) == 16
    (run,) = load_evidence([tmp_path / "run"])
    assert run.label == "run" and len(run.sources) == 16
    assert run.nodes == 2 and run.ranks == 16
    report = doctor([tmp_path / "run"], instance_type="p4d.24xlarge")
    assert report.verdict is Verdict.PASS


def test_a_fallback_run_dropped_into_the_same_folder_is_judged_apart(tmp_path: Path) -> None:
    split_by_rank(GOOD_EFA, tmp_path / "runs")
    (tmp_path / "runs" / "other.log").write_bytes(SOCKET_FALLBACK.read_bytes())
    report = doctor([tmp_path / "runs"], expect="efa")
    assert [len(s.sources) for s in report.subjects] == [16, 1]
    assert report.subjects[0].verdict is Verdict.PASS
    assert check(report, "fabric-in-use", 1).verdict is Verdict.FAIL


def test_two_capture_folders_are_two_subjects_with_distinct_names() -> None:
    report = doctor([LOGS / "h200x4_nvlink", LOGS / "h200x4_socket"], expect="nvlink")
    assert [s.subject for s in report.subjects] == ["h200x4_nvlink", "h200x4_socket"]
    assert [s.verdict for s in report.subjects] == [Verdict.PASS, Verdict.FAIL]


def test_old_nccl_without_commid_groups_by_nranks_and_distinct_ranks(tmp_path: Path) -> None:
    # NCCL 2.8 Init lines carry no commId (NVIDIA/nccl#629)
    line = (
        "{h}:{p}:{p} [{d}] NCCL INFO comm 0x7fdf{r:02d}000d00 rank {r} nranks 2 cudaDev {d} busId e7000"
        " - Init COMPLETE\n"
    )
    rank0, rank1, rerun0 = tmp_path / "a.log", tmp_path / "b.log", tmp_path / "c.log"
    rank0.write_text(line.format(h="n1", p=10, d=0, r=0), encoding="utf-8")
    rank1.write_text(line.format(h="n2", p=20, d=0, r=1), encoding="utf-8")
    rerun0.write_text(line.format(h="n1", p=30, d=0, r=0), encoding="utf-8")
    groups = group_runs([rank0, rank1, rerun0])
    assert [g.files for g in groups] == [[rank0, rank1], [rerun0]]


def test_a_log_that_names_no_communicator_is_judged_alone() -> None:
    tcpx = LOGS / "seed003_tcpx_activation.log"
    report = doctor([tcpx, LOGS / "nccl1597_efa_h200_gdrdma.log"])
    assert len(report.subjects) == 2


# --- one host cannot attest an inter-node fabric ---------------------------------------------------


def test_single_host_nvlink_run_warns_instead_of_failing_when_efa_is_expected() -> None:
    for flags in ({"instance_type": "p4d.24xlarge"}, {"expect": "efa"}):
        report = doctor([LOGS / "h200x4_nvlink"], **flags)
        plugin = check(report, "net-plugin")
        assert plugin.verdict is Verdict.WARN, flags
        assert plugin.cause.startswith(
            "single host: NET transport not exercised; run on >=2 nodes to attest efa"
        )
        assert report.verdict is Verdict.WARN and report.exit_code() == 0


def test_single_host_run_exits_0_through_the_console_script() -> None:
    done = subprocess.run(
        [sys.executable, "-c", "from gpufabric.cli.app import main; main()", "doctor",
         str(LOGS / "h200x4_nvlink"), "--instance-type", "p4d.24xlarge"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "single host: NET transport not exercised" in " ".join(done.stdout.split())


def test_multi_node_run_without_the_plugin_still_fails() -> None:
    report = doctor([SOCKET_FALLBACK], expect="efa")
    assert check(report, "net-plugin").verdict is Verdict.FAIL


# --- node counts only as far as the log shows them -------------------------------------------------


def test_one_hosts_share_of_a_multi_node_log_says_at_least() -> None:
    # NVIDIA/nccl#1597: one host's lines of a multi-node EFA job, no Init lines
    (run,) = load_evidence([LOGS / "nccl1597_efa_h200_gdrdma.log"])
    assert run.nodes is None and run.min_nodes == 1
    assert run.nodes_text.startswith("at least 1 node")
    report = doctor([LOGS / "nccl1597_efa_h200_gdrdma.log"], expect="efa")
    assert "at least 1 node" in check(report, "nccl-output").cause
    # not mistaken for a one-host run: the EFA links are judged
    assert check(report, "fabric-in-use").verdict is Verdict.PASS


def test_full_rank_lists_give_exact_node_counts() -> None:
    (run,) = load_evidence([GOOD_EFA])
    assert run.nodes == 2 and run.nodes_text == "2 nodes"
    (single,) = load_evidence([LOGS / "h200x4_nvlink"])
    assert single.nodes == 1 and single.nodes_text == "1 node"
