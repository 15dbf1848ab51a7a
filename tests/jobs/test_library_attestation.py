"""The jobs layer attests a run's NCCL logs itself: a library caller who names no attester gets the
attestation the command line gets. On a gloo run (no NCCL, so no NCCL log) the attester is still filled
in; on an nccl-tests run (``fixtures/launch/fake_nccl_tests.py`` behind a script that also leaves a real
NCCL log where ``NCCL_DEBUG_FILE`` points) the library's attestation equals the CLI's, field by field.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from plan_checks import gpufabric

from gpufabric.jobs import BenchRequest, Execution, prepare_bench, run_bench_job
from gpufabric.nccl_logs import attest_files
from gpufabric.results.io import read_result

FIXTURES = Path(__file__).parents[1] / "fixtures"
FAKE = FIXTURES / "launch" / "fake_nccl_tests.py"
NCCL_LOG = FIXTURES / "nccl_logs" / "constructed_efa_p4d_2node_4nics.log"


def test_a_library_gloo_run_is_attested_like_the_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    request = BenchRequest(max_bytes="1K", step_factor=8, iters=1, batches=1, warmup=0, backend="gloo",
                           run_dir=tmp_path / "lib")  # fmt: skip
    prepared = prepare_bench(request, Execution(ranks=2, timeout_s=180))
    assert prepared.execution.attest is attest_files  # filled in by the jobs layer, not by the CLI
    library = run_bench_job(prepared)
    args = ["--ranks", "2", "--backend", "gloo", "-e", "1K", "-f", "8", "-n", "1", "--batches", "1",
            "-w", "0", "--run-dir", str(tmp_path / "cli")]  # fmt: skip
    done = gpufabric("bench", args, tmp_path, {})
    assert done.returncode == 0, done.stderr
    cli = read_result(tmp_path / "cli" / "result.json")
    assert library.metadata.log_files == cli.metadata.log_files == []  # gloo: NCCL wrote no log
    assert library.attestation == cli.attestation


def test_a_library_nccl_tests_run_is_attested_like_the_cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    build = tmp_path / "build"
    build.mkdir()
    binary = build / "all_reduce_perf"
    binary.write_text(
        "#!/bin/sh\n"  # NCCL names its log by host (%h) and process (%p); one rank, one log
        f'cp {NCCL_LOG} "$(echo "$NCCL_DEBUG_FILE" | sed "s/%h/host/; s/%p/1/")"\n'
        f'exec {sys.executable} {FAKE} nompi "$@"\n'
    )
    binary.chmod(0o755)
    args = ["--engine", "nccl-tests", "--gpus-per-node", "1", "--nccl-tests-dir", str(build), "-b", "1K",
            "-e", "4K", "--run-dir", str(tmp_path / "cli")]  # fmt: skip
    done = gpufabric("bench", args, tmp_path, {})
    assert done.returncode == 0, done.stderr
    cli = read_result(tmp_path / "cli" / "result.json")
    assert cli.attestation is not None and cli.attestation.transports  # the log was read
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    request = BenchRequest(engine="nccl-tests", gpus_per_node=1, nccl_tests_dir=build, min_bytes="1K",
                           max_bytes="4K", run_dir=tmp_path / "lib")  # fmt: skip
    library = run_bench_job(prepare_bench(request, Execution()))
    assert library.attestation is not None
    assert [Path(f).name for f in library.attestation.source_files] == ["nccl.host.1.log"]
    same = {"source_files"}  # the same log, in each run's own directory
    assert library.attestation.model_dump(exclude=same) == cli.attestation.model_dump(exclude=same)
