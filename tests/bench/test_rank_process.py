"""The exit protocol and device choice both rank programs share (``bench.rank_process``): a failing rank
leaves errors/rank<N>.json, one ``Error:`` line and exit 2 (usage) or 1 (failure), never only a traceback.

The rank programs run as real processes, as a launcher starts them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpufabric.bench.config import BenchConfig
from gpufabric.bench.groups import GroupRound
from gpufabric.bench.identity import RankIdentity
from gpufabric.bench.rank_process import EXIT_FAILURE, EXIT_USAGE, run_as_rank
from gpufabric.errors import GpufabricError, UsageError

IDENTITY_VARS = ("RANK", "WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID", "MASTER_ADDR", "MASTER_PORT")


def _config_file(tmp_path: Path, module: str, backend: str | None) -> Path:
    """The config file ``module`` reads: the engine's BenchConfig, or a group round around it."""
    bench = BenchConfig(
        collectives=["all_reduce"], min_bytes=8, max_bytes=64, backend=backend, run_dir=tmp_path
    )
    path = tmp_path / "config.json"
    if module == "gpufabric.engines.torch.group_rank":
        spec = GroupRound(round=1, collective="all_reduce", size_bytes=64, groups=[[0, 1]], bench=bench)
        path.write_text(spec.model_dump_json(), encoding="utf-8")
    else:
        path.write_text(bench.model_dump_json(), encoding="utf-8")
    return path


def _run_rank(module: str, config: Path, extra_env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in IDENTITY_VARS}
    env.update(CUDA_VISIBLE_DEVICES="", **extra_env)  # no GPU, whatever this host has
    return subprocess.run(
        [sys.executable, "-m", module, "--config", str(config)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _error_file(run_dir: Path, rank: int) -> dict[str, object]:
    data: dict[str, object] = json.loads((run_dir / "errors" / f"rank{rank}.json").read_text())
    return data


@pytest.mark.parametrize("module", ["gpufabric.engines.torch.rank", "gpufabric.engines.torch.group_rank"])
def test_a_rank_with_half_an_identity_is_a_usage_error_of_rank_minus_one(tmp_path: Path, module: str) -> None:
    done = _run_rank(module, _config_file(tmp_path, module, None), {"RANK": "0"})
    assert done.returncode == EXIT_USAGE, done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        "Error: environment: RANK is set but WORLD_SIZE is not; the launcher must set both"
    )
    assert _error_file(tmp_path, -1) == {
        "rank": -1,
        "kind": "usage",
        "message": "environment: RANK is set but WORLD_SIZE is not; the launcher must set both",
    }


@pytest.mark.parametrize("module", ["gpufabric.engines.torch.rank", "gpufabric.engines.torch.group_rank"])
def test_nccl_on_a_rank_without_gpus_is_a_usage_error_with_the_fix(tmp_path: Path, module: str) -> None:
    done = _run_rank(module, _config_file(tmp_path, module, "nccl"), {})
    assert done.returncode == EXIT_USAGE, done.stderr
    assert "Traceback" not in done.stderr
    message = "--backend nccl: no CUDA GPU is visible to this rank; use --backend gloo"
    assert done.stderr.strip().splitlines()[-1] == f"Error: {message}"
    assert _error_file(tmp_path, 0) == {"rank": 0, "kind": "usage", "message": message}


@pytest.mark.parametrize(
    ("error", "code", "kind", "message"),
    [
        (UsageError("--op: bad"), EXIT_USAGE, "usage", "--op: bad"),
        (GpufabricError("the run failed"), EXIT_FAILURE, "failure", "the run failed"),
        (RuntimeError("boom\n  at line 2"), EXIT_FAILURE, "failure", "RuntimeError: boom at line 2"),
    ],
)
def test_each_failure_kind_leaves_its_file_and_exit_code(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    error: Exception,
    code: int,
    kind: str,
    message: str,
) -> None:
    for name in IDENTITY_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")

    def fails(identity: RankIdentity) -> int:
        raise error

    assert run_as_rank(tmp_path, fails) == code
    assert _error_file(tmp_path, 1) == {"rank": 1, "kind": kind, "message": message}
    stderr = capsys.readouterr().err
    if isinstance(error, GpufabricError):
        assert stderr == f"Error: {message}\n"
    else:  # an unexpected error keeps its traceback in the rank's output
        assert "Traceback" in stderr and "RuntimeError: boom" in stderr


def test_a_rank_that_succeeds_returns_its_status_and_leaves_no_error_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in IDENTITY_VARS:
        monkeypatch.delenv(name, raising=False)
    seen: list[int] = []

    def works(identity: RankIdentity) -> int:
        seen.append(identity.rank)
        return 0

    assert run_as_rank(tmp_path, works) == 0
    assert seen == [0] and not (tmp_path / "errors").exists()
