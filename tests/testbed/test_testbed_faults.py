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


def test_a_lossy_path_needs_netem(require_qdisc: Callable[[str], None]) -> None:
    require_qdisc("sch_netem")
    with Testbed(BedSpec(nodes=2)) as bed, bed.fault(SlowPath(nodes=(0, 1), delay_ms=5, loss_percent=1)):
        assert {"htb", "netem"} <= set(qdisc_kinds(bed, 0))


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
