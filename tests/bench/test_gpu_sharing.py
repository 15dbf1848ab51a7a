"""Another process on the run's GPUs is named in the notes (issue 36 item 3): which listed processes are
not the run's, in one pid namespace and across two, and the note rank 0 writes from every host's look.
NVML itself is read in the GPU suite (tests/engines/nccl/test_gpu_sharing.py); here the lister is a
stand-in over real processes, so the names come from their /proc entries."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from gpufabric.bench.gpu_sharing import Sharer, SharingWatch, check_setting, foreign, sharing_note, watch_for
from gpufabric.errors import UsageError

BUS = "00000000:00:07.0"


def test_a_pid_that_is_not_one_of_the_ranks_is_foreign() -> None:
    assert foreign([(11, 500), (99, 2048)], {11}) == [(99, 2048)]
    assert foreign([(11, 500)], {11}) == []


def test_in_another_pid_namespace_the_processes_beyond_the_ranks_are_counted_not_named() -> None:
    # NVML lists the host's pids: none is ours, so only the count tells, and which one is ours cannot be
    # told: one entry of minus the count, no pid, no memory.
    assert foreign([(4001, 500)], {11}) == []
    assert foreign([(5001, 4096), (5002, 500)], {11}) == [(-1, None)]
    note = sharing_note("all_reduce", [[vars(Sharer("n1", BUS, -1, "", None))]])
    assert note is not None and "1 process(es) beyond the run's ranks, not named)" in note
    assert "pid" not in note


def test_the_watch_names_a_real_process_sharing_a_gpu_and_forgets_it_once_taken() -> None:
    load = subprocess.Popen(["sleep", "30"])  # coreutils' sleep: its /proc name is "sleep" everywhere
    try:
        # With vfork, Popen can return before the kernel renames the child at exec (it wakes the parent
        # first): wait for the name, as a load running when the watch looks has it.
        deadline = time.monotonic() + 10
        while Path(f"/proc/{load.pid}/comm").read_text().strip() != "sleep" and time.monotonic() < deadline:
            time.sleep(0.01)
        listed = [(os.getpid(), 900), (load.pid, 3 * 1024)]
        watch = SharingWatch("node1", {BUS: {os.getpid()}}, lambda bus: listed if bus == BUS else [])
        seen = watch.take()
        assert [(s["pid"], s["bus_id"], s["memory_mib"]) for s in seen] == [(load.pid, BUS, 3072)]
        assert seen[0]["name"] == "sleep"
        note = sharing_note("all_reduce", [seen, []])
        assert note is not None and note.startswith("all_reduce: another process used the run's GPUs")
        assert f"GPU {BUS} on node1: pid {load.pid} sleep, 3.0 GiB" in note
        listed.pop()  # the load ended: nothing new to say at the next collective
        assert watch.take() == [] and sharing_note("reduce", [[], []]) is None
    finally:
        load.kill()
        load.wait()


def test_a_failing_lister_says_nothing_rather_than_failing_the_run() -> None:
    def broken(bus: str) -> list[tuple[int, int | None]]:
        raise RuntimeError("NVML gone")

    assert SharingWatch("node1", {BUS: {1}}, broken).take() == []


def test_only_the_hosts_lowest_rank_watches_and_mps_or_off_is_not_watched() -> None:
    facts = [{"bus_id": BUS, "pid": 5}, {"bus_id": BUS, "pid": 6}]
    follower, note = watch_for(facts, ["a", "a"], 1, environ={})
    assert follower.lister is None and note is None and follower.take() == []
    under_mps, why = watch_for(facts, ["a", "a"], 0, environ={"CUDA_MPS_PIPE_DIRECTORY": "/tmp/mps"})
    assert under_mps.lister is None and why is not None and "MPS" in why
    off, why_off = watch_for(facts, ["a", "a"], 0, environ={"GPUFABRIC_GPU_SHARING": "off"})
    assert off.lister is None and why_off is not None and "GPUFABRIC_GPU_SHARING=off" in why_off


def test_virtual_nodes_of_one_machine_are_watched_together_by_their_physical_host() -> None:
    """Virtual nodes name themselves host/vnodeK; the GPUs they share belong to the machine."""
    facts = [{"host": "m/vnode0", "bus_id": BUS, "pid": 5}, {"host": "m/vnode1", "bus_id": BUS, "pid": 6}]
    watch, note = watch_for(facts, ["m", "m"], 0, environ={"GPUFABRIC_GPU_SHARING": "on"})
    assert watch.own == {BUS: {5, 6}} or note is not None  # watched (or NVML missing here: said so)
    watch.stop()


@pytest.mark.parametrize("value", ["0", "false", "yes"])
def test_a_setting_other_than_on_or_off_is_one_line(value: str) -> None:
    with pytest.raises(UsageError, match=r"GPUFABRIC_GPU_SHARING=.*choose on or off"):
        check_setting({"GPUFABRIC_GPU_SHARING": value})
