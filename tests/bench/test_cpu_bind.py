"""GPUFABRIC_CPU_BIND: which CPUs a direct-engine rank takes (bench.cpu_bind), checked on this host's real
affinity in a child process (so the test's own process keeps its CPUs)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from gpufabric.bench.cpu_bind import bind, check_setting, chosen_cpus
from gpufabric.bench.engine_switches import check_switches
from gpufabric.errors import UsageError

CPUS = list(range(32))


def test_share_gives_each_local_rank_its_own_contiguous_share_and_core_its_first_cpu() -> None:
    assert chosen_cpus(CPUS, 0, 2, "share") == list(range(16))
    assert chosen_cpus(CPUS, 1, 2, "share") == list(range(16, 32))
    assert chosen_cpus(CPUS, 3, 4, "core") == [24]
    assert chosen_cpus(CPUS, 5, 4, "share") == list(range(8, 16))  # a local rank beyond the count wraps


def test_none_or_more_ranks_than_cpus_leave_the_placement_alone() -> None:
    assert chosen_cpus(CPUS, 0, 2, "none") is None
    assert chosen_cpus([0, 1], 0, 4, "share") is None


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
    assert out.endswith(f"[{allowed[len(allowed) // 2]}]")
    # taskset narrowed it already: the rank keeps what it was given and says nothing.
    assert _child(1, 2, "core", ["taskset", "-c", str(allowed[0])]) == f"None [{allowed[0]}]"
    assert _child(0, 2, "none").startswith("None")


def test_an_unknown_policy_is_one_line_and_an_unknown_local_size_binds_nothing() -> None:
    with pytest.raises(UsageError, match=r"GPUFABRIC_CPU_BIND='cores': choose one of none, share, core"):
        check_setting({"GPUFABRIC_CPU_BIND": "cores"})
    said = bind(0, None, {"GPUFABRIC_CPU_BIND": "core"})
    assert said is not None and "not applied" in said


@pytest.mark.parametrize(
    ("name", "value", "match"),
    [
        ("GPUFABRIC_CPU_BIND", "cores", r"GPUFABRIC_CPU_BIND='cores': choose one of none, share, core"),
        ("GPUFABRIC_GPU_SHARING", "0", r"GPUFABRIC_GPU_SHARING='0': choose on or off"),
        ("GPUFABRIC_LAUNCH_LOOP", "py", r"GPUFABRIC_LAUNCH_LOOP='py': choose c or python"),
    ],
)
def test_every_engine_switch_typo_is_one_line_before_anything_starts(
    name: str, value: str, match: str
) -> None:
    with pytest.raises(UsageError, match=match):
        check_switches({name: value})
    check_switches({})  # unset: the defaults
