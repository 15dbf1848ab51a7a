"""Which machines a real isolate tested: Slurm hostlists expanded as Slurm does, the nodes pinned, and the
host of every rank recorded and named in the verdict lines."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from gpufabric.analysis.isolate import ClusterModel, read_node_list, simulate
from gpufabric.analysis.isolate.hosts import shared_host_note, shared_hosts
from gpufabric.analysis.isolate.nodes import numbered_nodes
from gpufabric.cli.app import main
from gpufabric.jobs.isolate_launch import HostRecorder, pin_slurm_nodes
from gpufabric.launch.base import RankProgram
from gpufabric.launch.hostlist import expand_nodelist
from gpufabric.launch.local import LocalLauncher
from gpufabric.launch.slurm import SlurmLauncher
from gpufabric.report.isolate_render import host_verdicts

HOSTLISTS = ["node[01-04,07]", "gpu5,node[08-11]", "rack[1-2]-n[1-2]", "a[001-003],b,c[9-10]"]


@pytest.mark.skipif(shutil.which("scontrol") is None, reason="Slurm client not installed")
@pytest.mark.parametrize("hostlist", HOSTLISTS)
def test_hostlists_expand_as_scontrol_does(hostlist: str, tmp_path: Path) -> None:
    conf = tmp_path / "slurm.conf"  # scontrol expands offline; it only needs a configuration to read
    conf.write_text("ClusterName=t\nSlurmctldHost=localhost\nNodeName=localhost CPUs=1\n", encoding="utf-8")
    env = {**os.environ, "SLURM_CONF": str(conf)}
    proc = subprocess.run(
        ["scontrol", "show", "hostnames", hostlist], capture_output=True, text=True, env=env, check=True
    )
    assert expand_nodelist(hostlist, "SLURM_JOB_NODELIST") == proc.stdout.split()


def test_a_node_list_line_may_hold_a_bracket_with_commas(tmp_path: Path) -> None:
    listing = tmp_path / "nodes.txt"
    listing.write_text("gpu[001-002,010], spare1\n", encoding="utf-8")
    assert read_node_list(listing) == ["gpu001", "gpu002", "gpu010", "spare1"]


def _cli(
    args: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> tuple[int, str]:
    monkeypatch.setattr(sys, "argv", ["gpufabric", "isolate", *args])
    try:
        main()
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    return code, capsys.readouterr().err


def test_slurm_takes_its_nodes_from_the_allocation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # --ranks 3 is refused before any round, in a line that shows the node count the allocation gave.
    monkeypatch.setenv("SLURM_JOB_NODELIST", "node[01-04]")
    code, err = _cli(["--on", "slurm", "--ranks", "3", "--run-dir", str(tmp_path / "r")], capsys, monkeypatch)
    assert code == 2 and "one rank per node (4 nodes)" in err, err
    monkeypatch.delenv("SLURM_JOB_NODELIST")
    code, err = _cli(["--on", "slurm", "--run-dir", str(tmp_path / "r")], capsys, monkeypatch)
    assert code == 2 and "run --on slurm in an allocation" in err
    code, err = _cli(["--node-list", "/dev/null", "--on", "mpirun"], capsys, monkeypatch)
    assert code == 2 and "at least 2" in err


def test_named_slurm_nodes_are_pinned_in_the_batch_script(tmp_path: Path) -> None:
    program = RankProgram(argv=["true"], nranks=2, nodes=2, workdir=tmp_path, label="isolate")
    plan = pin_slurm_nodes(SlurmLauncher(), ["node01", "node07"]).render(program)
    assert "#SBATCH --nodelist=node01,node07" in "".join(plan.files.values())
    unpinned = pin_slurm_nodes(SlurmLauncher(), None).render(program)
    assert "--nodelist" not in "".join(unpinned.files.values())


def test_every_rank_host_is_recorded_from_a_real_launch(tmp_path: Path) -> None:
    recorder = HostRecorder().wrap(LocalLauncher())
    program = RankProgram(argv=[sys.executable, "-c", "pass"], nranks=2, workdir=tmp_path, label="hosts")
    outcome = recorder.execute(recorder.render(program), timeout_s=60)
    assert outcome.ok and recorder.rank_hosts == {0: socket.gethostname(), 1: socket.gethostname()}
    assert recorder.notes() == []


def test_verdict_lines_name_rank_and_host() -> None:
    names = numbered_nodes(8)
    report = simulate(ClusterModel(node_count=8, slow_nodes={3: 0.2}, noise=0.0), names)
    node_ranks = {name: [i] for i, name in enumerate(names)}
    hosts = {i: f"gpu{i + 1:02d}" for i in range(8)}
    assert host_verdicts(report, node_ranks, hosts) == ["slow: node0003 (rank 3 on gpu04)"]


def test_nodes_that_share_a_host_are_named_in_a_warning() -> None:
    """``--nodes 4`` on one machine: four ranks of one host. The note says what a verdict then means."""
    node_ranks = {name: [i] for i, name in enumerate(numbered_nodes(6))}
    hosts = {0: "vm", 1: "vm", 2: "vm", 3: "vm", 4: "gpu7", 5: "gpu8"}
    assert shared_hosts(node_ranks, hosts) == {"vm": ["node0000", "node0001", "node0002", "node0003"]}
    (note,) = shared_host_note(shared_hosts(node_ranks, hosts), virtual_nodes=False)
    assert note.startswith("4 nodes are ranks sharing one host, vm (node0000, node0001, node0002, node0003)")
    assert "a verdict names a slow rank, not a machine to drain" in note
    (virtual,) = shared_host_note({"h": [f"n{i}" for i in range(6)]}, virtual_nodes=True)
    assert "virtual nodes (NCCL_HOSTID)" in virtual and "(n0, n1, n2, n3 and 2 more)" in virtual
    # One node per host (mpirun --hostfile, Slurm): nothing to say.
    assert shared_hosts(node_ranks, {i: f"host{i}" for i in range(6)}) == {}
    assert shared_host_note({}, virtual_nodes=False) == []
