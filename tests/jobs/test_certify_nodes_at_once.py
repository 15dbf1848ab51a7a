"""The node stage's jobs at once (mpirun and Slurm run one job per node, ``--node-parallel`` at a time),
with real ranks: 2 local CPU nodes run side by side through the same machinery (the local launcher
itself keeps one job at a time; here the stage's runner is asked for 2).

node0001's own sweep hangs (``GPUFABRIC_FAULT=hang``); node0000's finishes and is judged on the calling
thread while the other still runs. Then a stop signal (SIGINT, as Ctrl-C) arrives: the stage raises
``Interrupted``, the hung job is stopped through the watchdog every job runs under, and no rank of it
is left running.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from gpufabric.analysis.certify import NodeStatus
from gpufabric.bench import parse_stage_timeouts
from gpufabric.jobs import CertifyRequest, Execution, prepare_certify
from gpufabric.jobs.certify_nodes import run_node_jobs
from gpufabric.jobs.certify_run import CertifyState
from gpufabric.launch.signals import Interrupted, stopping_on_signals


def _descendants(pid: int) -> set[int]:
    """Every living process below ``pid`` (from /proc: each child's parent)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] != "Z":
                parents[int(entry.name)] = int(fields[1])
    found, frontier = set(), {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


@pytest.mark.slow
def test_two_nodes_at_once_and_a_stop_signal_stops_the_one_still_running(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GPUFABRIC_FAULT", "hang:rank=1")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    request = CertifyRequest(nodes=2, run_dir=tmp_path / "run", node_max_bytes="1K")
    # The deadline only bounds the test if the signal never came: 120 s a size.
    prepared = prepare_certify(request, Execution(stage_timeouts=parse_stage_timeouts("size=120")))
    prepared.run_dir.mkdir()
    state = CertifyState(prepared, None)
    judged = threading.Event()

    def signal_once_node0_is_judged() -> None:
        while not any(f.stage == "node" for f in state.findings["node0000"]):
            time.sleep(0.2)
        judged.set()
        os.kill(os.getpid(), signal.SIGINT)

    watcher = threading.Thread(target=signal_once_node0_is_judged, daemon=True)
    # Daemons an earlier test of the session left running on purpose (a test Slurm cluster) are this
    # process's descendants too: only what this job started must be gone.
    before = _descendants(os.getpid())
    started = time.monotonic()
    with pytest.raises(Interrupted), stopping_on_signals():
        watcher.start()
        run_node_jobs(state, [0, 1], 2, None)
    assert judged.is_set() and time.monotonic() - started < 110  # stopped, not run to its deadline
    (alone,) = [f for f in state.findings["node0000"] if f.stage == "node"]
    assert alone.status is NodeStatus.PASS, alone.text
    assert not any(f.stage == "node" for f in state.findings["node0001"])  # stopped, not judged
    deadline = time.monotonic() + 10
    while _descendants(os.getpid()) - before and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _descendants(os.getpid()) - before == set()
