"""``train-bench --dry-run`` prints the plans a run executes: with a user environment set (``NCCL_DEBUG=WARN``
exported, ``NCCL_SOCKET_IFNAME`` given), the dry run's printed plan equals the plan the real run recorded in
its run directory (``plan.json``), and rank 0 saw the user's values. Preparing writes nothing; the A/B
prepares both sides' plans up front.

Real CPU (gloo) ranks through the real console entry point (the tiny model, two steps).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from plan_checks import gpufabric, recorded, without_ports

from gpufabric.errors import UsageError
from gpufabric.jobs import Execution, TrainRequest, prepare_train, train_launcher
from gpufabric.train import TrainConfig, read_train_document

USER_ENV = {"NCCL_DEBUG": "WARN"}  # exported by the user
QUICK = ["--ranks", "2", "--steps", "2", "--warmup-steps", "1", "--probe-iters", "2", "--no-scaling"]


def test_prepare_decides_the_plan_and_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NCCL_DEBUG", "WARN")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    request = TrainRequest(steps=2, warmup_steps=1, probe_iters=2, scaling=False, run_dir=tmp_path / "run",
                           command=["gpufabric", "train-bench"])  # fmt: skip
    prepared = prepare_train(request, Execution(ranks=2, env={"NCCL_SOCKET_IFNAME": "lo"}))
    (plan,) = prepared.plans
    assert not (tmp_path / "run").exists()  # preparing wrote nothing
    assert [c.env["NCCL_SOCKET_IFNAME"] for c in plan.commands] == ["lo", "lo"]
    assert all("NCCL_DEBUG" not in c.env for c in plan.commands)  # the user's WARN is inherited
    (run,) = prepared.runs
    assert run.config.run_dir == (tmp_path / "run").resolve() and run.config.block == 2  # min(5, steps)
    assert plan.commands[0].argv[-2:] == ["--config", str(run.config_path)]


def test_the_ab_prepares_both_sides_up_front(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    request = TrainRequest(ab=True, run_dir=tmp_path / "ab", command=["gpufabric", "train-bench", "--ab"])
    prepared = prepare_train(request, Execution(ranks=2))
    on, off, off2, on2 = prepared.runs  # ABBA: two rounds by default, as bench --ab
    assert [r.config.profile for r in prepared.runs] == ["fabric-on", "fabric-off", "fabric-off", "fabric-on"]
    assert [r.config.run_dir.name for r in prepared.runs] == [
        "r0-fabric-on", "r0-fabric-off", "r1-fabric-off", "r1-fabric-on"
    ]  # fmt: skip
    assert on.config.run_dir.parent == off.config.run_dir.parent == (tmp_path / "ab").resolve()
    assert on.config.scaling and not any(r.config.scaling for r in (off, off2, on2))  # timed once
    assert all(c.env.get("NCCL_P2P_DISABLE") == "1" for c in off.plan.commands)
    assert all("NCCL_P2P_DISABLE" not in c.env for c in on.plan.commands)
    assert prepared.root == tmp_path / "ab" and not (tmp_path / "ab").exists()


def test_train_dry_run_prints_the_plan_the_run_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    args = [*QUICK, "--env", "NCCL_SOCKET_IFNAME=lo", "--run-dir", str(tmp_path / "run"), "--timeout", "120"]
    dry = gpufabric("train-bench", [*args, "--dry-run"], tmp_path, USER_ENV)
    assert dry.returncode == 0, dry.stderr
    assert "NCCL_DEBUG" not in dry.stdout and "NCCL_SOCKET_IFNAME=lo" in dry.stdout
    assert "gpufabric.train.rank" in dry.stdout
    assert not (tmp_path / "run").exists()
    real = gpufabric("train-bench", [*args, "--format", "json"], tmp_path, USER_ENV)
    assert real.returncode == 0, real.stderr[-2000:]
    assert without_ports(dry.stdout) == without_ports(recorded(tmp_path / "run" / "plan.json"))
    result = read_train_document(tmp_path / "run" / "train.json")
    assert result.kind == "train"
    assert result.metadata.env["NCCL_DEBUG"] == "WARN"  # what rank 0 saw
    assert result.metadata.env["NCCL_SOCKET_IFNAME"] == "lo"
    # Calling the library gives what the command line gives (the QUICK flags, every other default).
    from_cli = TrainConfig.model_validate_json((tmp_path / "run" / "train_config.json").read_text())
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    request = TrainRequest(steps=2, warmup_steps=1, probe_iters=2, scaling=False, run_dir=tmp_path / "lib")
    (run,) = prepare_train(request, Execution(ranks=2)).runs
    ignore = {"run_dir", "command"}
    assert run.config.model_dump(exclude=ignore) == from_cli.model_dump(exclude=ignore)


def test_train_ab_dry_run_prints_both_sides(tmp_path: Path) -> None:
    dry = gpufabric(
        "train-bench", [*QUICK, "--ab", "--dry-run", "--run-dir", str(tmp_path / "ab")], tmp_path, USER_ENV
    )
    assert dry.returncode == 0, dry.stderr
    on, off, off2, on2 = dry.stdout.split("# launcher: local")[1:]  # one plan per job, ABBA
    assert "r0-fabric-on/train_config.json" in on and "NCCL_P2P_DISABLE" not in on
    assert "r0-fabric-off/train_config.json" in off and "NCCL_P2P_DISABLE=1" in off
    assert "r1-fabric-off/train_config.json" in off2 and "r1-fabric-on/train_config.json" in on2
    assert not (tmp_path / "ab").exists()


def test_virtual_nodes_split_the_ranks_into_nccl_nodes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    prepared = prepare_train(TrainRequest(virtual_nodes=2, run_dir=tmp_path / "vn"), Execution())
    (plan,) = prepared.plans
    assert (plan.program.nodes, plan.program.nranks) == (2, 2)  # at least one rank per virtual node
    assert len({c.env["NCCL_HOSTID"] for c in plan.commands}) == 2


def test_train_bench_on_mpirun_plans_a_free_port(tmp_path: Path) -> None:
    """train-bench's mpirun ranks on this host rendezvous on a free port (``launch.launcher_factory``'s),
    never the fixed default, so two jobs here do not collide."""
    from gpufabric.launch.identity import DEFAULT_MASTER_PORT

    dry = gpufabric(
        "train-bench",
        [*QUICK, "--on", "mpirun", "--dry-run", "--run-dir", str(tmp_path / "run")],
        tmp_path,
        {},
    )
    assert dry.returncode == 0, dry.stderr
    assert "# launcher: mpirun" in dry.stdout
    ports = {line.split("=", 1)[1] for line in dry.stdout.splitlines() if line.startswith("MASTER_PORT=")}
    assert len(ports) == 1 and ports != {str(DEFAULT_MASTER_PORT)}, dry.stdout
    assert not (tmp_path / "run").exists()


def test_train_bench_takes_the_shared_launcher_factory() -> None:
    """Ranks on this host: every rank here (the sweep's memory bound) and a fresh launcher per job."""
    from gpufabric.jobs import train_placement

    where = train_placement("mpirun")
    assert where.ranks_here and where.launcher().name == "mpirun"
    assert not train_placement("mpirun", hosts=["a", "b"]).ranks_here
    assert train_placement("local", virtual_nodes=2).launcher().name == "local"


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: train_launcher("kubernetes"), "--on: unknown value 'kubernetes'; choose from local, mpirun"),
        (lambda: train_launcher("mpirun", virtual_nodes=2), "--virtual-nodes/--mps: the local launcher's"),
        (lambda: train_launcher("local", mps=True), "--mps: for ranks that share a GPU"),
        (lambda: train_launcher("slurm", hosts=["a"]), "--hosts: only --on mpirun places ranks on hosts"),
        (
            lambda: TrainRequest(strategy="zero3").train_config(on_gpu=False),
            "--strategy: unknown value 'zero3'",
        ),
        (lambda: TrainRequest(device="tpu").train_config(on_gpu=False), "--device: unknown value 'tpu'"),
        (
            lambda: prepare_train(TrainRequest(ab=True, rounds=0), Execution(ranks=2)),
            "--rounds: 0 is out of range; choose 1..16",
        ),
        (
            lambda: prepare_train(TrainRequest(instance_type="p5.48xlarge"), Execution(ranks=2)),
            "--instance-type: only --ab uses it",
        ),
    ],
)
def test_flags_that_do_not_go_together_are_refused(make: Callable[[], object], message: str) -> None:
    with pytest.raises(UsageError) as refused:
        make()
    assert str(refused.value).startswith(message)
