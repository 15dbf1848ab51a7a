"""Virtual nodes: NCCL_HOSTID per node, GPUs shared, ranks numbered like a real multi-node job."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpufabric.errors import UsageError
from gpufabric.launch.base import RankProgram
from gpufabric.launch.local import LocalLauncher


def _program(nranks: int, gpus: int = 1) -> RankProgram:
    return RankProgram(argv=["x"], nranks=nranks, gpus_per_node=gpus, workdir=Path("/tmp/r"))


def test_two_nodes_on_one_gpu_get_their_own_host_ids() -> None:
    plan = LocalLauncher(virtual_nodes=2, gpu_ids=["0"], master_port=1234).render(_program(4))
    envs = [c.env for c in plan.commands]
    assert [e["NODE_RANK"] for e in envs] == ["0", "0", "1", "1"]
    assert [e["LOCAL_RANK"] for e in envs] == ["0", "1", "0", "1"]
    assert len({e["NCCL_HOSTID"] for e in envs}) == 2
    assert envs[0]["NCCL_HOSTID"] == envs[1]["NCCL_HOSTID"]
    assert {e["CUDA_VISIBLE_DEVICES"] for e in envs} == {"0"}
    assert any("time-slice" in n for n in plan.notes)


def test_eight_gpus_two_nodes_each_get_half() -> None:
    plan = LocalLauncher(virtual_nodes=2, gpu_ids=[str(i) for i in range(8)], master_port=1).render(
        _program(8)
    )
    assert [c.env["CUDA_VISIBLE_DEVICES"] for c in plan.commands] == [str(i) for i in range(8)]
    assert [c.env["GPUFABRIC_VIRTUAL_NODE"] for c in plan.commands] == ["0"] * 4 + ["1"] * 4


def test_more_nodes_than_ranks_is_refused() -> None:
    with pytest.raises(UsageError, match="leaves nodes empty"):
        LocalLauncher(virtual_nodes=3, gpu_ids=["0"], master_port=1).render(_program(2))


def test_mps_is_announced_and_missing_control_binary_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    plan = LocalLauncher(virtual_nodes=2, gpu_ids=["0"], master_port=1, mps=True).render(_program(2))
    assert any("MPS control daemon" in n for n in plan.notes)
    from gpufabric.launch import mps

    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(UsageError, match="--mps: nvidia-cuda-mps-control is not on PATH"):
        mps.check_available()


def test_launch_task_nodes_become_virtual_nodes_with_their_gpu_share() -> None:
    import json
    import os
    import subprocess
    import sys

    task = Path(__file__).parents[1] / "fixtures" / "launch" / "show_env.yaml"
    proc = subprocess.run(
        [sys.executable, "-m", "gpufabric.cli", "launch", str(task), "--virtual-nodes", "--dry-run",
         "--format", "json"],
        capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, "CUDA_VISIBLE_DEVICES": "0,1,2,3"},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    commands = json.loads(proc.stdout)["commands"]
    assert [c["env"]["CUDA_VISIBLE_DEVICES"] for c in commands] == ["0,1", "2,3"]
    assert len({c["env"]["NCCL_HOSTID"] for c in commands}) == 2
