"""A sweep writes its result once after the ranks exit, with the caller's last step in it
(``Execution.finish``: the CLI's judgement), in the run directory and in ``--out`` alike; real gloo ranks."""

from __future__ import annotations

import os
from pathlib import Path

from gpufabric.bench import BenchConfig, Execution, prepare_sweep, run_sweep
from gpufabric.results import RunResult, read_result


def _finish(result: RunResult) -> RunResult:
    return result.model_copy(update={"label": "finished by the caller"})


def test_the_callers_step_is_in_the_one_write_and_in_out(tmp_path: Path) -> None:
    config = BenchConfig(collectives=["all_reduce"], min_bytes=8, max_bytes=64, iters=2, warmup=1, batches=1,
                         backend="gloo", device="cpu", run_dir=tmp_path / "run")  # fmt: skip
    environ = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "GPUFABRIC_NO_METADATA": "1"}
    out = tmp_path / "out.json"
    execution = Execution(ranks=2, environ=environ, timeout_s=300, out=out, finish=_finish)
    result = run_sweep(prepare_sweep(config, execution))
    assert result.label == "finished by the caller"
    kept = read_result(tmp_path / "run" / "result.json")
    assert kept.label == "finished by the caller"
    assert kept.metadata.phases is not None and kept.metadata.phases.ranks_exited is not None  # the command's
    assert read_result(out).label == "finished by the caller"
