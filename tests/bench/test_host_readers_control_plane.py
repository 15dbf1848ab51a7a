"""The host readers both engines share (``bench.hosts``, ``bench.traffic``, ``bench.node_facts``) over the
direct NCCL engine's own side channel, the TCP control plane, between real processes on this host: one
rank per host reads (so three ranks here read once), the readings reach rank 0 as JSON, and a node that
cannot be read is a note, never a failed run."""

from __future__ import annotations

import multiprocessing
import os
import socket
import time
from pathlib import Path
from typing import Any

from gpufabric.bench.hosts import RankHosts
from gpufabric.bench.node_facts import NodeFacts
from gpufabric.bench.semantics import layout, wire_bytes_per_rank
from gpufabric.bench.traffic import SizeTraffic
from gpufabric.engines.nccl.control import ControlPlane
from gpufabric.hardware.attribution import HostTraffic, attribute_host
from gpufabric.hardware.snapshot import NodeSnapshot

PAYLOAD_BYTES = 4 << 20
CALLS = 7


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _rank(rank: int, world: int, port: int, queue: Any) -> None:
    plane = ControlPlane(rank, world, "127.0.0.1", port, timeout_s=60)
    hosts = RankHosts.learn(rank, plane)
    nodes = NodeFacts.begin(hosts, {"GPUFABRIC_NO_METADATA": "1"})
    records = nodes.collect(plane)
    traffic = SizeTraffic(hosts, plane)
    traffic.begin()  # lines the ranks up after the reading: no payload leaves before it
    # Real bytes over loopback between the readings: every rank's 4 MB string to rank 0, and rank 0's
    # answer of all three back to ranks 1 and 2. sendall returns once rank 0's answers are in its socket
    # buffers, before loopback has carried them: ``finish`` lines the ranks up before its reading, so
    # ranks 1 and 2 have read them by then (this test once did both line-ups itself; the engines did not).
    plane.allgather("x" * PAYLOAD_BYTES)
    shape = layout("all_reduce", 1 << 20, 4, world)
    moved = traffic.finish(shape, CALLS)
    answer = None
    if records is not None:
        answer = {
            "snapshots": {h: s.model_dump(mode="json") for h, s in records.snapshots.items()},
            "notes": records.notes,
            "moved": [m.model_dump(mode="json") for m in moved],
        }
    queue.put((rank, hosts.reads_host, answer))
    plane.close()


def test_three_ranks_of_one_host_read_it_once_and_rank_0_gets_it() -> None:
    port, world = _free_port(), 3
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    procs = [ctx.Process(target=_rank, args=(r, world, port, queue)) for r in range(world)]
    for proc in procs:
        proc.start()
    answers = sorted(queue.get(timeout=120) for _ in range(world))
    for proc in procs:
        proc.join(timeout=30)
        assert proc.exitcode == 0
    assert [(rank, reads) for rank, reads, _ in answers] == [(0, True), (1, False), (2, False)]
    assert answers[1][2] is None and answers[2][2] is None  # only rank 0 holds the hosts' records
    rank0 = answers[0][2]
    here = socket.gethostname()
    (snapshot,) = [NodeSnapshot.model_validate(s) for s in rank0["snapshots"].values()]
    assert list(rank0["snapshots"]) == [here] and rank0["notes"] == []
    assert snapshot.hostname == here and "lo" in [n.name for n in snapshot.shape.nics]
    (record,) = rank0["moved"]
    traffic = HostTraffic.model_validate(record)
    assert (traffic.host, traffic.ranks, traffic.calls) == (here, 3, CALLS)
    shape = layout("all_reduce", 1 << 20, 4, world)
    assert traffic.expected_bytes == round(wire_bytes_per_rank(shape) * CALLS * 3)
    lo = {n.name: n for n in traffic.nics}["lo"]
    # 2 x 4 MB to rank 0 and 2 x 12 MB back, as JSON strings: at least 32 MB crossed loopback (other
    # tests on this shared box may add their own loopback bytes, never remove ours).
    assert lo.tx_bytes >= 8 * PAYLOAD_BYTES
    assert attribute_host(traffic).busiest == "lo"


def _slow_detect(**_: Any) -> NodeSnapshot:
    time.sleep(5)
    raise AssertionError("collect must not wait this long")


def _refused_detect(**_: Any) -> NodeSnapshot:
    # What a locked-down /sys does to a reader that does not expect it.
    raise PermissionError(13, "Permission denied", "/sys/class/net")


def test_a_node_that_cannot_be_read_is_a_note_and_the_run_goes_on() -> None:
    plane = ControlPlane(0, 1, None, None, timeout_s=1)
    hosts = RankHosts.learn(0, plane)
    refused = NodeFacts.begin(hosts, os.environ, detect=_refused_detect).collect(plane)
    assert refused is not None and refused.snapshots == {}
    assert refused.notes == [
        f"node snapshot of {hosts.host}: PermissionError: [Errno 13] Permission denied: '/sys/class/net'; "
        "this host's shape is not in the result"
    ]
    slow = NodeFacts.begin(hosts, os.environ, detect=_slow_detect).collect(plane, wait_s=0.2)
    assert slow is not None and slow.snapshots == {}
    assert slow.notes == [
        f"node snapshot of {hosts.host}: still reading after 0.2 s; this host's shape is not in the result"
    ]


def test_the_lowest_rank_of_each_host_reads_it() -> None:
    hosts = ("a", "b", "a", "b", "c")
    readers = [r for r in range(5) if RankHosts(r, hosts).reads_host]
    assert readers == [0, 1, 4]
    assert [RankHosts(r, hosts).ranks_here for r in range(5)] == [2, 2, 2, 2, 1]


def test_the_ranks_ask_no_metadata_service_unless_told(tmp_path: Path) -> None:
    """What ``detect`` is asked: the cloud's metadata only with GPUFABRIC_CLOUD_METADATA=1."""
    plane = ControlPlane(0, 1, None, None, timeout_s=1)
    hosts = RankHosts.learn(0, plane)
    asked: list[bool] = []

    def detect(**kwargs: Any) -> NodeSnapshot:
        asked.append(kwargs["metadata"])
        raise OSError("stop here")

    for environ in ({}, {"GPUFABRIC_CLOUD_METADATA": "0"}, {"GPUFABRIC_CLOUD_METADATA": "1"}):
        NodeFacts.begin(hosts, environ, sysfs_root=tmp_path, detect=detect).collect(plane)
    assert asked == [False, False, True]
