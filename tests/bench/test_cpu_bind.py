"""GPUFABRIC_CPU_BIND: which CPUs a direct-engine rank takes (bench.cpu_bind), checked on this host's real
affinity in a child process (so the test's own process keeps its CPUs)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpufabric.bench.cpu_bind import (
    bind,
    check_setting,
    chosen_cpus,
    cores_of,
    numa_nodes_of,
    parse_cpulist,
    resolved_policy,
)
from gpufabric.bench.engine_switches import check_switches
from gpufabric.errors import UsageError

CPUS = list(range(32))
ONE_THREAD_CORES = [[cpu] for cpu in CPUS]


def test_share_gives_each_local_rank_its_own_contiguous_share_and_core_its_first_cpu() -> None:
    assert chosen_cpus(ONE_THREAD_CORES, 0, 2, "share") == list(range(16))
    assert chosen_cpus(ONE_THREAD_CORES, 1, 2, "share") == list(range(16, 32))
    assert chosen_cpus(ONE_THREAD_CORES, 3, 4, "core") == [24]
    assert chosen_cpus(ONE_THREAD_CORES, 5, 4, "share") == list(range(8, 16))  # beyond the count: wraps


def test_none_or_more_ranks_than_cpus_leave_the_placement_alone() -> None:
    assert chosen_cpus(ONE_THREAD_CORES, 0, 2, "none") is None
    assert chosen_cpus([[0], [1]], 0, 4, "share") is None


def _sysfs(root: Path, siblings: dict[int, str], nodes: dict[int, str]) -> tuple[Path, Path]:
    """A /sys/devices/system tree shaped as the kernel writes it (cpuN/topology, nodeN/cpulist)."""
    for cpu, text in siblings.items():
        topo = root / "cpu" / f"cpu{cpu}" / "topology"
        topo.mkdir(parents=True)
        (topo / "thread_siblings_list").write_text(text + "\n")
    for node, text in nodes.items():
        (root / "node" / f"node{node}").mkdir(parents=True)
        (root / "node" / f"node{node}" / "cpulist").write_text(text + "\n")
    return root / "cpu", root / "node"


def test_a_share_holds_whole_cores_where_the_host_numbers_hyper_threads_apart(tmp_path: Path) -> None:
    # 8 cores, 16 CPUs: core c is CPUs c and c+8 (how most x86 hosts number hyper-thread siblings)
    siblings = {cpu: f"{cpu % 8},{cpu % 8 + 8}" for cpu in range(16)}
    sys_cpu, _ = _sysfs(tmp_path, siblings, {0: "0-15"})
    cores = cores_of(list(range(16)), sys_cpu)
    assert cores[:2] == [[0, 8], [1, 9]] and len(cores) == 8
    # cut in CPU order, ranks 0 and 2 of 4 would share cores 0-3; by cores each takes two whole cores
    assert chosen_cpus(cores, 0, 4, "share") == [0, 8, 1, 9]
    assert chosen_cpus(cores, 2, 4, "share") == [4, 12, 5, 13]
    assert chosen_cpus(cores, 3, 4, "core") == [6]
    # more ranks than cores: the shares are cut from the CPUs
    assert chosen_cpus(cores, 9, 16, "share") == [12]


def test_auto_binds_on_one_numa_node_and_leaves_a_two_node_host_to_the_launcher(tmp_path: Path) -> None:
    _, one = _sysfs(tmp_path / "one", {}, {0: "0-15"})
    assert numa_nodes_of(list(range(16)), one) == 1
    assert resolved_policy("auto", list(range(16)), one) == ("share", " (auto: one NUMA node)")
    _, two = _sysfs(tmp_path / "two", {}, {0: "0-7,16-23", 1: "8-15,24-31"})
    assert numa_nodes_of(CPUS, two) == 2 and numa_nodes_of(list(range(8)), two) == 1
    policy, why = resolved_policy("auto", CPUS, two)
    assert policy == "none" and "span 2 NUMA nodes" in why and "GPUFABRIC_CPU_BIND=share" in why
    assert resolved_policy("auto", CPUS, tmp_path / "absent")[0] == "none"  # unreadable: no guess
    assert resolved_policy("core", CPUS, two) == ("core", "")  # a policy asked for is kept
    assert parse_cpulist("0-2,8,10-11\n") == [0, 1, 2, 8, 10, 11] and parse_cpulist("") == []


CHILD = """
import os, sys
from gpufabric.bench.cpu_bind import bind
said = bind(int(sys.argv[1]), int(sys.argv[2]))
print(said, sorted(os.sched_getaffinity(0)))
"""


def _child(local_rank: int, local_size: int, policy: str, prefix: list[str] | None = None) -> str:
    env = {**os.environ, "GPUFABRIC_CPU_BIND": policy}
    argv = [*(prefix or []), sys.executable, "-c", CHILD, str(local_rank), str(local_size)]
    return subprocess.run(argv, env=env, capture_output=True, text=True, check=True).stdout.strip()


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity") or (os.cpu_count() or 1) < 2, reason="needs 2 CPUs")
def test_a_rank_binds_itself_and_says_so_unless_someone_narrowed_its_cpus_first() -> None:
    allowed = sorted(os.sched_getaffinity(0))
    if len(allowed) < (os.cpu_count() or 0):
        pytest.skip("this test process already runs on a narrowed CPU set")
    out = _child(1, 2, "core")
    assert out.startswith("CPU binding core: local rank 1 on CPUs")
    first_of_second_share = cores_of(allowed)[len(cores_of(allowed)) // 2][0]
    assert out.endswith(f"[{first_of_second_share}]")
    # taskset narrowed it already: the rank keeps what it was given and says nothing.
    assert _child(1, 2, "core", ["taskset", "-c", str(allowed[0])]) == f"None [{allowed[0]}]"
    assert _child(0, 2, "none").startswith("None")
    # auto: share on a host of one NUMA node, else the launcher's placement and a note why
    said = _child(0, 2, "auto")
    if numa_nodes_of(allowed) == 1:
        assert said.startswith("CPU binding share (auto: one NUMA node): local rank 0 on CPUs")
    else:
        assert said.startswith("CPU binding auto kept the launcher's placement")


def test_an_unknown_policy_is_one_line_and_an_unknown_local_size_binds_nothing() -> None:
    with pytest.raises(
        UsageError, match=r"GPUFABRIC_CPU_BIND='cores': choose one of none, auto, share, core"
    ):
        check_setting({"GPUFABRIC_CPU_BIND": "cores"})
    said = bind(0, None, {"GPUFABRIC_CPU_BIND": "core"})
    assert said is not None and "not applied" in said


@pytest.mark.parametrize(
    ("name", "value", "match"),
    [
        ("GPUFABRIC_CPU_BIND", "cores", r"GPUFABRIC_CPU_BIND='cores': choose one of none, auto, share, core"),
        ("GPUFABRIC_GPU_SHARING", "0", r"GPUFABRIC_GPU_SHARING='0': choose on or off"),
        ("GPUFABRIC_LAUNCH_LOOP", "py", r"GPUFABRIC_LAUNCH_LOOP='py': choose c or python"),
        (
            "GPUFABRIC_BUFFERS",
            "ncclmem",
            r"GPUFABRIC_BUFFERS='ncclmem': choose cuda .* or nccl \(ncclMemAlloc",
        ),
    ],
)
def test_every_engine_switch_typo_is_one_line_before_anything_starts(
    name: str, value: str, match: str
) -> None:
    with pytest.raises(UsageError, match=match):
        check_switches({name: value})
    check_switches({})  # unset: the defaults
    check_switches({"GPUFABRIC_BUFFERS": "NCCL"})  # either case, as the ranks read it
