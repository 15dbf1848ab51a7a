"""A bed is built, used and always removed: on leaving the block, on SIGTERM, and after a SIGKILL by
the next build's sweep, which never touches a bed whose owner is alive."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from gpufabric.testbed import BedSpec, Testbed, sweep_leftovers
from gpufabric.testbed.sweep import bed_namespaces, namespace_pids

pytestmark = pytest.mark.netns

# A bed's owner in its own process: builds, starts a process inside node 1 that does not die with its
# parent (as an escaped rank would), says so on stdout, then waits for stdin or a signal.
OWNER = textwrap.dedent("""
    import subprocess, sys, time
    from gpufabric.testbed import BedSpec, StarvedNode, Testbed
    with Testbed(BedSpec(nodes=2)) as bed:
        bed.apply(StarvedNode(node=0, core=0))
        stray = subprocess.Popen(["ip", "netns", "exec", bed.names.namespace(1), "sleep", "300"])
        # Popen returns at the fork; the child enters node 1 a moment later (a busy box once lost the race)
        for _ in range(100):
            pids = subprocess.run(["ip", "netns", "pids", bed.names.namespace(1)], capture_output=True,
                                  text=True, timeout=10).stdout.split()
            if str(stray.pid) in pids:
                break
            time.sleep(0.1)
        print(bed.names.run_id, stray.pid, flush=True)
        sys.stdin.readline()
""")


def links_here() -> set[str]:
    out = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True, timeout=10, check=True)
    return {line.split(":", 2)[1].strip().split("@")[0] for line in out.stdout.splitlines()}


def start_owner() -> tuple[subprocess.Popen[str], str, int]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2] / "src")}
    owner = subprocess.Popen([sys.executable, "-c", OWNER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True, env=env)  # fmt: skip
    assert owner.stdout is not None
    run_id, stray = owner.stdout.readline().split()
    return owner, run_id, int(stray)


def test_a_bed_lives_in_its_own_namespaces_and_leaves_nothing() -> None:
    host_before = links_here()
    with Testbed(BedSpec(nodes=4)) as bed:
        spaces = bed_namespaces()[bed.names.run_id]
        assert sorted(spaces) == sorted(bed.names.namespaces(4))
        assert links_here() == host_before  # no veth, no bridge in the host's namespace
        shown = subprocess.run(["ip", "-n", bed.names.namespace(3), "-o", "addr", "show"],
                               capture_output=True, text=True, timeout=10, check=True).stdout  # fmt: skip
        assert f"{bed.names.address(3)}/24" in shown and bed.names.interface(3) in shown
        ports = ["ip", "-n", bed.names.bridge_namespace, "-o", "link", "show", "master", bed.names.bridge]
        bridge = subprocess.run(ports, capture_output=True, text=True, timeout=10, check=True)
        assert sorted(line.split(":")[1].strip().split("@")[0] for line in bridge.stdout.splitlines()) == [
            bed.names.port(k) for k in range(4)
        ]
    assert bed.names.run_id not in bed_namespaces()
    assert links_here() == host_before


def test_a_killed_owner_s_bed_is_swept_but_a_live_one_is_not() -> None:
    owner, run_id, stray = start_owner()
    try:
        sweep_leftovers()  # the owner is alive: its bed stays
        assert len(bed_namespaces()[run_id]) == 3
        owner.kill()
        owner.wait(timeout=10)
        assert len(bed_namespaces()[run_id]) == 3 and Path(f"/proc/{stray}").exists()
        with Testbed(BedSpec(nodes=2)) as bed:  # every build sweeps first
            assert set(bed.swept) >= {f"gft{run_id}-n0", f"gft{run_id}-n1", f"gft{run_id}-br"}
        assert run_id not in bed_namespaces()
        assert not Path(f"/proc/{stray}").exists() or "zombie" in Path(f"/proc/{stray}/status").read_text()
    finally:
        if owner.poll() is None:
            owner.kill()


def test_sigterm_to_the_owner_tears_its_bed_down() -> None:
    owner, run_id, stray = start_owner()
    assert namespace_pids(f"gft{run_id}-n1")  # the stray process is inside node 1
    owner.send_signal(signal.SIGTERM)
    owner.wait(timeout=30)
    assert run_id not in bed_namespaces()
    assert not Path(f"/proc/{stray}").exists()
