"""The ranks ``gpufabric bench`` starts before its plan (``cli.bench_early``): every flag of the command is
classified, the guess is made only where the local launcher will run our ranks, and a guess is exactly
the plan's command for the same request (else a standby would never be taken: ``launch.standby``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer

from gpufabric.bench.rank_engines import CPU_RANKS_PER_CORE, RANK_MODULES, usable_cores
from gpufabric.cli.app import app
from gpufabric.cli.bench_early import EARLY_FLAGS, guess_ranks
from gpufabric.jobs import BenchRequest, Execution, prepare_bench
from gpufabric.launch.standby import StandbyRank


def _bench_options() -> dict[str, bool]:
    """Every option name of ``gpufabric bench`` and whether it takes a value (click's own view)."""
    command: Any = typer.main.get_command(app)
    bench = command.commands["bench"]
    names: dict[str, bool] = {}
    for param in bench.params:
        for name in (*param.opts, *param.secondary_opts):
            names[name] = not param.is_flag
    for name in bench.get_help_option_names(command.make_context("gpufabric", ["bench"])):
        names[name] = False
    return names


def test_every_flag_of_bench_is_classified_with_its_arity() -> None:
    options = _bench_options()
    assert set(EARLY_FLAGS) == set(options)
    assert {name: takes for name, (_, takes) in EARLY_FLAGS.items()} == options


def _gpus(tmp_path: Path, count: int) -> Path:
    """A ``/proc/driver/nvidia/gpus``-shaped folder: one directory per GPU, named by its PCI address."""
    root = tmp_path / "gpus"
    for i in range(count):
        (root / f"0000:{i:02x}:00.0").mkdir(parents=True)
    return root


def test_no_gpu_guesses_four_torch_ranks(tmp_path: Path) -> None:
    guess = guess_ranks(["bench"], {"PATH": "/bin"}, gpus_dir=tmp_path / "none")
    assert guess is not None
    module, envs, args = guess
    assert args == []  # runs/<timestamp>-<label>/ is named when the plan is made
    assert module == RANK_MODULES["torch"]
    assert [env["LOCAL_RANK"] for env in envs] == ["0", "1", "2", "3"]
    assert all("CUDA_VISIBLE_DEVICES" not in env and env["PATH"] == "/bin" for env in envs)


def test_gpus_give_one_rank_per_gpu_seeing_the_first_ones(tmp_path: Path) -> None:
    guess = guess_ranks(
        ["bench", "--engine", "nccl", "--ranks=2", "-e", "1M"], {}, gpus_dir=_gpus(tmp_path, 4)
    )
    assert guess is not None
    module, envs, _ = guess
    assert module == RANK_MODULES["nccl"]
    assert [(e["RANK"], e["LOCAL_RANK"], e["CUDA_VISIBLE_DEVICES"]) for e in envs] == [
        ("0", "0", "0,1"),
        ("1", "1", "0,1"),
    ]


def test_cuda_visible_devices_is_read_as_the_launcher_reads_it(tmp_path: Path) -> None:
    guess = guess_ranks(["bench", "--engine", "torch"], {"CUDA_VISIBLE_DEVICES": "3, 5"}, gpus_dir=tmp_path)
    assert guess is not None
    assert [env["CUDA_VISIBLE_DEVICES"] for env in guess[1]] == ["3,5", "3,5"]


def test_env_pairs_are_in_the_standby_s_environment(tmp_path: Path) -> None:
    argv = ["bench", "--env", "OMP_NUM_THREADS=2", "--env=NCCL_ALGO=Ring", "--env", "HOME"]
    guess = guess_ranks(argv, {"HOME": "/root"}, gpus_dir=tmp_path)
    assert guess is not None
    assert {k: guess[1][0][k] for k in ("OMP_NUM_THREADS", "NCCL_ALGO", "HOME")} == {
        "OMP_NUM_THREADS": "2",
        "NCCL_ALGO": "Ring",
        "HOME": "/root",
    }


@pytest.mark.parametrize(
    "argv",
    [
        ["show", "run"],
        [],
        ["bench", "--dry-run"],
        ["bench", "--ab"],
        ["bench", "--on", "mpirun"],
        ["bench", "--on=slurm"],
        ["bench", "--virtual-nodes", "2"],
        ["bench", "--self-test"],
        ["bench", "--engine", "nccl-tests"],
        ["bench", "--engine", "nccl"],  # no GPU here: the plan refuses it
        ["bench", "--backend", "gloo"],
        ["bench", "--hosts", "a,b"],
        ["bench", "-n20"],  # a short flag with its value attached: not read, so no guess
        ["bench", "--iters"],  # a value missing: click's error, not ours
        ["bench", "--graph=yes"],
        ["bench", "extra"],
        ["bench", "--ranks", "two"],
        ["bench", "-h"],
    ],
)
def test_no_guess_where_the_local_launcher_may_not_run_our_ranks(argv: list[str], tmp_path: Path) -> None:
    assert guess_ranks(argv, {}, gpus_dir=tmp_path / "none") is None


def test_more_ranks_than_gpus_or_cores_is_left_to_the_plan_s_refusal(tmp_path: Path) -> None:
    gpus, none = _gpus(tmp_path, 2), tmp_path / "none"
    assert guess_ranks(["bench", "--ranks", "3", "--engine", "torch"], {}, gpus_dir=gpus) is None
    bound = CPU_RANKS_PER_CORE * usable_cores()  # bench.config.check_cpu_ranks's bound by cores
    assert guess_ranks(["bench", "--ranks", str(bound)], {}, gpus_dir=none) is not None
    assert guess_ranks(["bench", "--ranks", str(bound + 1)], {}, gpus_dir=none) is None
    assert guess_ranks(["bench", "--ranks", "100000"], {}, gpus_dir=none) is None


class _Waiting:
    """A live process stand-in: ``plan_for`` asks only whether it still runs."""

    stdin = None

    def poll(self) -> None:
        return None


@pytest.mark.parametrize(
    ("argv", "environ"),
    [
        (["bench", "--ranks", "2", "-e", "1M", "--env", "NCCL_ALGO=Ring"], {"CUDA_VISIBLE_DEVICES": ""}),
        (["bench", "--engine", "torch", "--ranks", "2", "-e", "1M"], {"CUDA_VISIBLE_DEVICES": "0,1"}),
    ],
)
def test_every_guessed_rank_can_become_its_planned_command(
    argv: list[str], environ: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The guess against the plan ``prepare_bench`` makes for the same flags (CPU ranks; ranks on two
    GPUs, the torch engine so that this box's missing nccl4py changes nothing): each planned command is
    taken by the standby of its local rank."""
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    argv = [*argv, "--run-dir", str(tmp_path / "run")]
    guess = guess_ranks(argv, os.environ, gpus_dir=tmp_path / "none")
    assert guess is not None
    module, envs, args = guess
    assert args == ["--config", str(tmp_path / "run" / "config.json")]  # what ps shows: the plan's
    env_pairs = {"NCCL_ALGO": "Ring"} if "--env" in argv else {}
    request = BenchRequest(
        max_bytes="1M", run_dir=tmp_path / "run", engine="torch" if "torch" in argv else "gpufabric"
    )
    prepared = prepare_bench(request, Execution(ranks=2, env=env_pairs))
    commands = prepared.dry_run().jobs[0].plan.commands
    standbys = [
        StandbyRank(_Waiting(), [sys.executable, "-m", module, "--standby", *args], env) for env in envs
    ]  # type: ignore[arg-type]
    plans = [
        standby.plan_for(command, os.environ) for standby, command in zip(standbys, commands, strict=True)
    ]
    assert all(plan is not None for plan in plans), [c.env for c in commands]
    assert [plan["args"] for plan in plans if plan is not None] == [c.argv[3:] for c in commands]


def test_the_guess_imports_neither_pydantic_nor_typer() -> None:
    """It runs before the CLI's own imports: what it imports delays every rank."""
    probe = "import json, sys, gpufabric.cli.bench_early; print(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    loaded = done.stdout
    assert '"pydantic"' not in loaded and '"typer"' not in loaded and '"click"' not in loaded
