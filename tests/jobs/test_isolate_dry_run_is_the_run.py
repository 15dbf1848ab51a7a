"""``isolate --dry-run`` prints the plan a run executes: with a user environment set (``NCCL_DEBUG=WARN``
and ``NCCL_SOCKET_IFNAME=lo`` exported), the dry run's printed plan equals the plan the real run recorded
for its first round (``round01/plan.json``), and neither sets NCCL's debug level over the user's.

Only the first round (the screen) exists before any measurement; the later rounds are prepared the same
way when the search asks for them. Real CPU (gloo) ranks: two nodes are one screen group, one round.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from plan_checks import gpufabric, recorded, without_ports

from gpufabric.bench.group_runner import GroupRunner, prepare_round, round_spec
from gpufabric.bench.groups import NodeRanks, RoundSettings
from gpufabric.errors import GpufabricError
from gpufabric.jobs import (
    Execution,
    IsolateRequest,
    LauncherFactory,
    PreparedMeasurement,
    isolate_plan_notes,
    prepare_isolate,
    run_isolate_job,
)
from gpufabric.launch.base import LaunchPlan
from gpufabric.launch.local import LocalLauncher

BLOCKED_CLI = Path(__file__).parents[1] / "install" / "blocked_cli.py"
USER_ENV = {"NCCL_DEBUG": "WARN", "NCCL_SOCKET_IFNAME": "lo"}  # exported by the user
# One quick round: 1 KB alltoalls, one short batch.
QUICK = ["--size", "1K", "--iters", "1", "--batches", "1", "--batch-seconds", "0.01"]


def _local(name: str, virtual_nodes: int) -> LauncherFactory:
    assert (name, virtual_nodes) == ("local", 0)
    return LocalLauncher


def test_the_run_executes_the_prepared_first_round_and_records_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in USER_ENV.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    request = IsolateRequest(nodes=2, backend="gloo", size="1K", iters=1, batches=1, batch_seconds=0.01,
                             run_dir=tmp_path / "run")  # fmt: skip
    prepared = prepare_isolate(request, Execution(ranks=2, timeout_s=180), launchers=_local)
    assert isinstance(prepared, PreparedMeasurement)
    assert not (tmp_path / "run").exists()  # preparing wrote nothing
    rank_env = prepared.plan.commands[0].env
    assert "NCCL_DEBUG" not in rank_env  # the user's WARN is inherited, not overridden by INFO
    assert "NCCL_SOCKET_IFNAME" not in rank_env  # inherited as exported, not copied
    assert prepared.environ["NCCL_SOCKET_IFNAME"] == "lo"  # the environment the rounds hand on
    assert isolate_plan_notes(prepared)[1].startswith("round 1 (screen), the job below: 1 group(s): node000")
    answer = run_isolate_job(prepared)
    assert answer.report.rounds == 1 and answer.world_size == 2 and answer.backend == "gloo"
    (first,) = answer.round_dirs
    assert LaunchPlan.model_validate_json((Path(first) / "plan.json").read_text()) == prepared.plan.redacted()
    assert json.loads((tmp_path / "run" / "isolate.json").read_text()) == answer.model_dump(mode="json")


def test_isolate_dry_run_prints_the_plan_the_run_records(tmp_path: Path) -> None:
    args = [
        "--nodes",
        "2",
        "--backend",
        "gloo",
        *QUICK,
        "--run-dir",
        str(tmp_path / "run"),
        "--format",
        "json",
    ]
    dry = gpufabric("isolate", [*args, "--dry-run"], tmp_path, USER_ENV)
    assert dry.returncode == 0, dry.stderr
    assert "NCCL_DEBUG=INFO" not in dry.stdout and "group_rank" in dry.stdout
    assert not (tmp_path / "run").exists()
    real = gpufabric("isolate", args, tmp_path, USER_ENV)
    assert real.returncode == 0, real.stderr
    notes, printed = dry.stdout.split("# launcher: ", 1)  # isolate's notes, then the plan
    assert (
        notes.startswith("# isolate on real ranks: 2 nodes (--nodes 2)") and "note: link sweep off" in notes
    )
    printed = "# launcher: " + printed
    plan = Path(json.loads(real.stdout)["round_dirs"][0]) / "plan.json"
    assert without_ports(printed) == without_ports(recorded(plan))


def test_a_dry_run_needs_no_torch_and_writes_nothing(tmp_path: Path) -> None:
    dry = gpufabric(
        "isolate",
        ["--nodes", "4", "--backend", "gloo", "--dry-run"],
        tmp_path,
        USER_ENV,
        head=[str(BLOCKED_CLI)],
    )
    assert dry.returncode == 0, dry.stderr
    assert "gpufabric.engines.torch.group_rank" in dry.stdout and "2 group(s)" in dry.stdout
    assert list(tmp_path.iterdir()) == []


def test_a_runner_refuses_to_run_other_groups_than_the_prepared_round(tmp_path: Path) -> None:
    """The dry run showed the prepared round: if the search asked for other groups, running them would
    make the dry run a lie, so the round stops before any rank starts."""
    settings, nodes = RoundSettings(), NodeRanks.one_per_node(4)
    spec = round_spec(settings, nodes, number=1, groups=[(0, 1), (2, 3)], run_dir=tmp_path, backend="gloo")
    first = prepare_round(spec, launcher=LocalLauncher(), nranks=4, on_gpu=False, env={}, environ={})
    runner = GroupRunner(settings, node_ranks=nodes, launcher=LocalLauncher, run_dir=tmp_path, on_gpu=False,
                         backend="gloo", first_round=first)  # fmt: skip
    with pytest.raises(GpufabricError, match=r"asked for rank groups \[\[0, 2\], \[1, 3\]\]"):
        runner([(0, 2), (1, 3)])
    assert list(tmp_path.iterdir()) == []
