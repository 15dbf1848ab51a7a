"""What the jobs layer decides for ``gpufabric bench`` that the CLI used to: ``--self-test``'s shape from
the GPUs an environment shows, the output paths refused before anything runs, and when wrong data fails
the command (``bench_failure``, nccl-tests' results included). Nothing runs a rank here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gpufabric.errors import CheckFailed, UsageError
from gpufabric.jobs import BenchRequest, Execution, bench_failure, prepare_bench, self_test_shape
from gpufabric.results.io import read_result

RESULT = Path(__file__).parents[1] / "fixtures" / "gpu_h200x4" / "bench_allreduce_nvlink.json"


@pytest.mark.parametrize(
    ("visible", "shape"),
    [("0,1,2,3", (2, False, 4)), ("0", (2, True, 2))],  # one GPU: two ranks share it, with MPS
)
def test_self_test_splits_the_visible_gpus_into_two_virtual_nodes(
    visible: str, shape: tuple[int, bool, int]
) -> None:
    assert self_test_shape(0, False, None, "local", environ={"CUDA_VISIBLE_DEVICES": visible}) == shape
    assert self_test_shape(2, False, 8, "mpirun", environ={"CUDA_VISIBLE_DEVICES": visible})[2] == 8


@pytest.mark.parametrize(
    ("virtual_nodes", "on", "visible", "message"),
    [
        (0, "slurm", "0,1", "--self-test: runs on this node (--on local or --on mpirun); drop --on slurm"),
        (3, "local", "0,1", "--self-test: is two virtual nodes; drop --virtual-nodes"),
        (0, "local", "", "--self-test: needs this node's GPUs and NCCL; none is visible here"),
    ],
)
def test_self_test_refuses_what_it_cannot_run(
    virtual_nodes: int, on: str, visible: str, message: str
) -> None:
    with pytest.raises(UsageError) as refused:
        self_test_shape(virtual_nodes, False, None, on, environ={"CUDA_VISIBLE_DEVICES": visible})
    assert str(refused.value) == message


def test_prepare_refuses_output_paths_before_anything_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    with pytest.raises(UsageError, match=r"--out: .* is a directory"):
        prepare_bench(BenchRequest(run_dir=tmp_path / "run"), Execution(ranks=2, out=tmp_path))
    used = tmp_path / "used"
    used.mkdir()
    (used / "result.json").write_text("{}")
    with pytest.raises(UsageError, match="--run-dir"):
        prepare_bench(BenchRequest(run_dir=used), Execution(ranks=2))
    assert not (tmp_path / "run").exists()


def test_wrong_data_fails_the_command_once_shown() -> None:
    result = read_result(RESULT)
    assert bench_failure(result) is None
    result.series[0].wrong_total = 3
    failure = bench_failure(result)
    assert isinstance(failure, CheckFailed)
    assert str(failure).startswith("--check: 3 wrong element(s) in ")
