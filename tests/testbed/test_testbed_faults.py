"""Each fault as the kernel holds it: qdiscs with their rates and filters, a NIC down, ranks pinned
beside a busy loop; and each one gone again once removed."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from gpufabric.launch.base import RankProgram
from gpufabric.launch.processes import watching
from gpufabric.testbed import BedSpec, DeadLink, SlowPath, StarvedNode, Testbed
from gpufabric.testbed.faults import path_class
from gpufabric.testbed.loss import drop_class
from gpufabric.testbed.sweep import namespace_pids
from gpufabric.testbed.traffic import traffic_program

pytestmark = pytest.mark.netns


def tc_show(bed: Testbed, node: int, what: str) -> str:
    """``tc WHAT show`` of node ``node``'s NIC (text: iproute2 6.1 has no JSON for htb classes)."""
    argv = ["ip", "netns", "exec", bed.names.namespace(node), "tc", what, "show", "dev",
            bed.names.interface(node)]  # fmt: skip
    return subprocess.run(argv, capture_output=True, text=True, timeout=10, check=True).stdout


def qdisc_kinds(bed: Testbed, node: int) -> list[str]:
    return [line.split()[1] for line in tc_show(bed, node, "qdisc").splitlines() if line.strip()]


def test_a_slow_path_is_shaped_on_both_ends_and_removed(require_qdisc: Callable[[str], None]) -> None:
    require_qdisc("sch_htb")
    with Testbed(BedSpec(nodes=4, nic_rate_mbit=200)) as bed:
        with bed.fault(SlowPath(nodes=(1, 2), rate_mbit=40)):
            for node, peer in ((1, 2), (2, 1)):
                classes = tc_show(bed, node, "class")
                assert f"class htb {path_class(peer)} parent 1:1 prio 0 rate 40Mbit ceil 40Mbit" in classes
                assert "class htb 1:1 root rate 200Mbit" in classes
                # u32 prints the destination as hex: 10.213.0.(peer + 1)
                wanted = f"match 0ad500{peer + 1:02x}/ffffffff at 16"
                assert wanted in tc_show(bed, node, "filter")
            assert qdisc_kinds(bed, 0) == ["tbf"]  # node 0: only the NIC rate
        for node in (1, 2):
            assert qdisc_kinds(bed, node) == ["tbf"]


def test_a_delayed_path_needs_netem(require_qdisc: Callable[[str], None]) -> None:
    require_qdisc("sch_netem")
    with Testbed(BedSpec(nodes=2)) as bed, bed.fault(SlowPath(nodes=(0, 1), delay_ms=5)):
        assert {"htb", "netem"} <= set(qdisc_kinds(bed, 0))


def in_node(bed: Testbed, node: int, script: str, *args: str) -> list[str]:
    """A Python ``script`` run inside node ``node``'s namespace."""
    return ["ip", "netns", "exec", bed.names.namespace(node), sys.executable, "-c", script, *args]


RECEIVER = """
import socket, sys
r = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
r.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
r.bind((sys.argv[1], 5555)); r.settimeout(10.0); print("ready", flush=True)
got = 0
try:
    while True:
        r.recv(2048); got += 1; r.settimeout(0.5)
except socket.timeout:
    print(got, flush=True)
"""
SENDER = """
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(int(sys.argv[1])):
    for peer in sys.argv[2:]:
        s.sendto(b"x" * 200, (peer, 5555))
    if i % 50 == 49:
        time.sleep(0.005)
"""


def datagrams_received(bed: Testbed, sender: int, receivers: list[int], count: int) -> list[int]:
    """Send ``count`` UDP datagrams from node ``sender`` to each receiver node; how many each one got."""

    listening = [
        subprocess.Popen(in_node(bed, k, RECEIVER, bed.names.address(k)), stdout=subprocess.PIPE, text=True)
        for k in receivers
    ]
    try:
        for process in listening:
            assert process.stdout is not None and process.stdout.readline().strip() == "ready"
        addresses = [bed.names.address(k) for k in receivers]
        subprocess.run(in_node(bed, sender, SENDER, str(count), *addresses), check=True, timeout=60)
        return [int(process.communicate(timeout=30)[0].strip()) for process in listening]
    finally:
        for process in listening:
            process.kill()
            process.wait()


TCP_RECEIVER = """
import socket, sys
listener = socket.create_server((sys.argv[1], 5556)); listener.settimeout(30); print("ready", flush=True)
connection, _ = listener.accept(); connection.settimeout(30)
got = 0
while chunk := connection.recv(1 << 16):
    got += len(chunk)
print(got, flush=True)
"""
TCP_SENDER = """
import socket, sys
with socket.create_connection((sys.argv[1], 5556), timeout=30) as s:
    s.sendall(b"x" * int(sys.argv[2]))
"""


def tcp_bytes_delivered(bed: Testbed, sender: int, receiver: int, size: int) -> int:
    """Send ``size`` bytes over one TCP connection from node ``sender`` to ``receiver``; bytes received."""
    target = bed.names.address(receiver)
    listening = subprocess.Popen(
        in_node(bed, receiver, TCP_RECEIVER, target), stdout=subprocess.PIPE, text=True
    )
    try:
        assert listening.stdout is not None and listening.stdout.readline().strip() == "ready"
        subprocess.run(in_node(bed, sender, TCP_SENDER, target, str(size)), check=True, timeout=60)
        return int(listening.communicate(timeout=60)[0].strip())
    finally:
        listening.kill()
        listening.wait()


def retransmitted(bed: Testbed, node: int) -> int:
    """TCP segments node ``node`` has retransmitted (its namespace's own /proc/net/snmp)."""
    argv = ["ip", "netns", "exec", bed.names.namespace(node), "cat", "/proc/net/snmp"]
    header, values = [
        line.split()
        for line in subprocess.run(
            argv, capture_output=True, text=True, timeout=10, check=True
        ).stdout.splitlines()
        if line.startswith("Tcp:")
    ]
    return int(values[header.index("RetransSegs")])


def test_a_lossy_path_drops_its_share_of_packets_between_its_two_nodes_only(
    require_qdisc: Callable[[str], None], tmp_path: Path
) -> None:
    require_qdisc("cls_bpf")
    count, loss = 2000, 10.0
    with (
        Testbed(BedSpec(nodes=3, nic_rate_mbit=200)) as bed,
        bed.fault(SlowPath(nodes=(0, 1), loss_percent=loss)),
    ):
        for node, peer in ((0, 1), (1, 0)):  # on the bridge's port towards each end: the other's drop
            port = ["ip", "netns", "exec", bed.names.bridge_namespace, "tc", "-s", "class", "show", "dev",
                    bed.names.port(node)]  # fmt: skip
            shown = subprocess.run(port, capture_output=True, text=True, timeout=10, check=True).stdout
            assert f"class htb {drop_class(peer)} parent 1:1 leaf" in shown, shown
        lossy, clean = datagrams_received(bed, 0, [1, 2], count)
        back, _ = datagrams_received(bed, 1, [0, 2], count)
        # 10% of 2000 is 200 lost, binomial sd 13.4: 130..270 is over 5 sd either way
        assert count - 270 <= lossy <= count - 130, lossy
        assert count - 270 <= back <= count - 130, back
        assert clean == count  # node 0 -> node 2 is not on the lossy path
        # TCP over the lossy path still delivers every byte, by retransmitting what the filter dropped
        before = retransmitted(bed, 0)
        # 8 MiB: veth segments offload into 64 KB packets, so 1 MiB was only ~16 of them, none dropped in
        # about one run in five at 10% (0.9^16); 128 of them all pass once in a million
        assert tcp_bytes_delivered(bed, 0, 1, 8 << 20) == 8 << 20
        assert retransmitted(bed, 0) > before


def test_a_dead_link_cuts_that_node_off_until_it_comes_back(tmp_path: Path) -> None:
    with Testbed(BedSpec(nodes=3)) as bed:
        program = traffic_program("all_reduce", 64 * 1024, 2, 3, tmp_path)
        unreachable: set[str] = set()

        def collect(prefix: str, line: str) -> None:
            if "Network is unreachable" in line:
                unreachable.add(prefix)

        def seen() -> str | None:  # stop the job once a rank said so: the rendezvous would wait 60 s
            return "a rank cannot reach the rendezvous" if unreachable else None

        with bed.fault(DeadLink(node=2)), watching(seen):
            launcher = bed.launcher()
            outcome = launcher.execute(launcher.render(program), timeout_s=120, on_output=collect)
        assert not outcome.ok and outcome.failure is not None
        assert unreachable == {"[rank 2]"}, outcome.failure
        launcher = bed.launcher()
        assert launcher.execute(launcher.render(program), timeout_s=120).ok


def test_a_starved_node_s_ranks_share_the_busy_core(tmp_path: Path) -> None:
    with Testbed(BedSpec(nodes=2)) as bed:
        with bed.fault(StarvedNode(node=1, core=0)):
            load = namespace_pids(bed.names.namespace(1))
            assert len(load) == 1
            assert Path(f"/proc/{load[0]}/status").read_text().count("Cpus_allowed_list:\t0\n") == 1
            affinity = [sys.executable, "-c", "import os; print('cores', sorted(os.sched_getaffinity(0)))"]
            launcher = bed.launcher()
            lines: list[tuple[str, str]] = []
            program = RankProgram(argv=affinity, nranks=2, workdir=tmp_path)
            assert launcher.execute(launcher.render(program), on_output=lambda p, x: lines.append((p, x))).ok
            assert ("[rank 1]", "cores [0]") in lines
            assert ("[rank 0]", f"cores {sorted(os.sched_getaffinity(0))}") in lines  # node 0: unpinned
        assert namespace_pids(bed.names.namespace(1)) == []
