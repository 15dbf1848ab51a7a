"""The RAS client against a socket that answers as NCCL's does (fake_ras.py) with the bytes NCCL 2.28.9's
RAS really sent on 4x H200 (captures.py: a clean 4-rank nccl-tests job, then the same job with rank 3's
process stopped), and the readers against RAS output from NCCL's user guide (tests/fixtures/nccl_native)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from gpufabric.errors import GpufabricError, UsageError
from gpufabric.nccl_native import accuse, parse_ras_json, parse_ras_text, query_diagnostics, query_status
from gpufabric.nccl_native.ras_client import RasAddress, ras_address

sys.path.insert(0, str(Path(__file__).parent))
from captures import ras_commands, ras_report
from fake_ras import FakeRas

FIXTURES = Path(__file__).parents[1] / "fixtures" / "nccl_native"
# What the captures show (the job's one node, its communicator, the process stopped with SIGSTOP).
HOST = "192.0.2.2"
COMM = "9eba32c015a1596f"
STOPPED_PID = 2652


def _serving(state: str) -> FakeRas:
    return FakeRas(
        status_text=ras_report(f"ras-nccl2289-{state}-text"),
        status_json=ras_report(f"ras-nccl2289-{state}-json"),
    )


@pytest.fixture
def ras() -> Iterator[FakeRas]:
    server = _serving("stopped")
    yield server
    server.close()


def test_json_query_speaks_ncclras_protocol_and_repairs_2_28_json(ras: FakeRas) -> None:
    status = query_status(RasAddress("127.0.0.1", ras.port), ras_timeout_s=5)
    assert ras.commands == ras_commands("ras-nccl2289-stopped-json")  # what the GPU machine's RAS answered
    assert status.format == "json" and status.nccl_version == "2.28.9"
    assert any("comma" in note for note in status.notes)  # 2.28.9 really omits it after nvml_dev
    (comm, missing), *rest = status.missing_ranks()
    assert rest == [] and comm.hash == COMM and (comm.size, comm.ranks_reporting) == (4, 3)
    assert (missing.rank, missing.host, missing.pid, missing.state) == (3, HOST, STOPPED_PID, "unresponsive")
    assert not status.healthy()


def test_older_nccl_without_json_falls_back_to_text(ras: FakeRas) -> None:
    ras.has_json = False
    status = query_status(RasAddress("127.0.0.1", ras.port))
    assert status.format == "text" and any("2.28.7" in note for note in status.notes)
    assert (status.nodes, status.processes, status.gpus) == (1, 4, 4)
    assert [(g.ranks_per_comm, g.status, g.errors) for g in status.groups] == [(4, "RUNNING", "INCOMPLETE")]
    assert [(p.pid, p.host, p.gpus) for p in status.incomplete_processes] == [(STOPPED_PID, HOST, "3")]
    [(comm, missing)] = status.missing_ranks()
    assert comm.label == "#0-0" and comm.hash == COMM
    assert (missing.rank, missing.pid, missing.host, missing.state) == (3, STOPPED_PID, HOST, "unresponsive")


def test_suspects_name_the_stopped_rank_and_healthy_controls(ras: FakeRas) -> None:
    accusation = accuse(query_status(RasAddress("127.0.0.1", ras.port)))
    [suspect] = accusation.suspects
    assert suspect.host == HOST and suspect.strength == "silent"
    assert f"rank 3 of comm {COMM} unresponsive (pid {STOPPED_PID})" in suspect.reasons
    assert accusation.controls == []  # every answering rank is on the suspect's node


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_clean_job_every_rank_present(fmt: str) -> None:
    server = _serving("clean")
    server.has_json = fmt == "json"
    try:
        status = query_status(RasAddress("127.0.0.1", server.port))
    finally:
        server.close()
    assert status.healthy() and status.missing_ranks() == []
    assert (status.format, status.nccl_version) == (fmt, "2.28.9")
    # JSON lists every rank's host, so the healthy node is a control; text names hosts only in errors
    assert accuse(status).suspects == [] and accuse(status).controls == ([HOST] if fmt == "json" else [])


def test_guide_json_sample() -> None:
    text = (FIXTURES / "ras_json_2.29.1_guide.json").read_text()
    status = parse_ras_json(text, address="localhost:28028")
    assert status.notes == [] and status.nccl_version == "2.29.1"
    [comm] = status.communicators
    assert (comm.size, comm.ranks_reporting, comm.errors) == (2, 1, ["INCOMPLETE"])
    assert [(m.rank, m.pid, m.state) for m in comm.missing] == [(1, 1524345, "unresponsive")]


def test_guide_text_stopped_and_dead() -> None:
    stopped = parse_ras_text((FIXTURES / "ras_text_stopped_guide.txt").read_text(), address="a:1")
    assert [p.pid for p in stopped.incomplete_processes] == [3487984]
    [(comm, missing)] = stopped.missing_ranks()
    assert (comm.hash, missing.rank, stopped.timeouts) == ("cf264af53edbe986", 21, 2)
    assert stopped.groups[0].ranks_per_node == "7-8" and not stopped.healthy()
    dead = parse_ras_text((FIXTURES / "ras_text_dead_guide.txt").read_text(), address="a:1")
    assert dead.dead_process_count == 1 and [p.host for p in dead.dead_processes] == ["172.16.64.213"]
    assert accuse(dead).suspects[0].host == "172.16.64.213"


def test_guide_mismatch_is_lagging_not_unhealthy() -> None:
    status = parse_ras_text((FIXTURES / "ras_text_mismatch_guide.txt").read_text(), address="a:1")
    [comm] = status.communicators
    [mismatch] = comm.mismatches
    assert [(g.count, g.value, len(g.ranks)) for g in mismatch.groups] == [(26, "6650", 0), (6, "6649", 6)]
    assert status.healthy()
    [suspect] = accuse(status).suspects
    assert suspect.strength == "lagging" and suspect.host == "172.16.64.210"


def test_nothing_listening_is_one_line() -> None:
    with pytest.raises(GpufabricError, match=r"RAS at 127\.0\.0\.1:1: nothing answered .*NCCL_RAS_ADDR"):
        query_status(RasAddress("127.0.0.1", 1), connect_timeout_s=0.5)


def test_diagnostics_on_old_nccl_says_what_it_lacks(ras: FakeRas) -> None:
    with pytest.raises(GpufabricError, match=r"Unknown command DIAGNOSTICS.*2\.31"):
        query_diagnostics(RasAddress("127.0.0.1", ras.port), timeout_s=5)


def test_diagnostics_report_is_returned(ras: FakeRas) -> None:
    ras.diagnostics = (FIXTURES / "diag_guide.txt").read_text()
    raw = query_diagnostics(RasAddress("127.0.0.1", ras.port), timeout_s=5)
    assert raw.splitlines()[0] == "node0:24563 NCCL DIAG === NCCL Diagnostics ==="
    assert ras.commands[-1] == "DIAGNOSTICS"


@pytest.mark.parametrize(
    ("text", "env", "expected"),
    [
        (None, {}, ("localhost", 28028)),
        (None, {"NCCL_RAS_ADDR": "10.1.2.3:29000"}, ("10.1.2.3", 29000)),
        ("node7", {}, ("node7", 28028)),
        ("[::1]:5000", {}, ("::1", 5000)),
    ],
)
def test_address(text: str | None, env: dict[str, str], expected: tuple[str, int]) -> None:
    address = ras_address(text, env)
    assert (address.host, address.port) == expected


def test_bad_address_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="--host: 'node:x' is not HOST"):
        ras_address("node:x", {})
