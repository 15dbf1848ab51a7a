"""certify when something goes wrong: one line, the other nodes' verdicts kept, the exit code as documented.

- A node whose own sweep hangs (``GPUFABRIC_FAULT=hang``) is stopped at the stage deadline and fails with
  the launcher's line; the other node keeps its pass, and the group tests are skipped (one node left).
- A full disk (a real 1 MB tmpfs, filled): the certificates cannot be written; each file is one line in
  ``write_errors``, the verdicts are returned all the same and the exit code is 1.
- Bad flags and sources: one ``UsageError`` line before anything runs.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from gpufabric.bench import parse_stage_timeouts
from gpufabric.errors import UsageError
from gpufabric.jobs import CertifyRequest, Execution, prepare_certify, run_certify_job
from gpufabric.jobs.certify_finish import finish
from gpufabric.jobs.certify_run import CertifyState, preflight_stage
from gpufabric.report import certify_html


@pytest.mark.slow
def test_a_hung_node_fails_at_the_stage_deadline_and_the_other_keeps_its_verdict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GPUFABRIC_FAULT", "hang:rank=1")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    request = CertifyRequest(nodes=2, run_dir=tmp_path / "run", node_max_bytes="1K")
    # A 1 KB gloo all_reduce takes milliseconds; 15 s a size leaves a loaded 2-core box room for the
    # healthy node and still stops the hung one well inside the test's time.
    execution = Execution(stage_timeouts=parse_stage_timeouts("size=15"))
    report = run_certify_job(prepare_certify(request, execution), html_page=certify_html)
    reasons = {node: [r.text for r in cert.reasons] for node, cert in report.certificates.items()}
    assert report.summary.nodes == {"node0000": "pass", "node0001": "fail"}, reasons
    (reason,) = report.certificates["node0001"].reasons
    assert reason.code == "node:failed" and "after 15 s" in reason.text and "\n" not in reason.text
    assert report.certificates["node0000"].stages["between"].startswith("not run: fewer than 2 nodes")
    assert report.exit_code == 1


def _tiny_tmpfs(where: Path) -> bool:
    where.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(where)], capture_output=True, check=False
    )
    return done.returncode == 0


def test_a_full_disk_keeps_the_verdicts_and_says_which_files_it_lost(tmp_path: Path) -> None:
    disk = tmp_path / "disk"
    if os.geteuid() != 0 or not _tiny_tmpfs(disk):
        pytest.skip("mounting a 1 MB tmpfs needs root and mount(8)")
    try:
        prepared = prepare_certify(
            CertifyRequest(nodes=2, run_dir=disk / "run"), Execution(environ={"CUDA_VISIBLE_DEVICES": ""})
        )
        prepared.run_dir.mkdir()
        state = CertifyState(prepared, None)
        preflight_stage(state)
        with (disk / "filler").open("wb") as filler:  # now the disk is full
            try:
                while True:
                    filler.write(b"\0" * 65536)
            except OSError:
                pass
        report = finish(state, interrupted=None, signal_exit=None, html_page=certify_html)
        assert set(report.summary.nodes) == {"node0000", "node0001"}
        assert report.write_errors and all("No space left on device" in e for e in report.write_errors)
        assert report.exit_code == 1
    finally:
        subprocess.run(["umount", str(disk)], check=False)


@pytest.mark.parametrize(
    ("request_fields", "message"),
    [
        (
            {"nodes": 2, "on": "kubernetes"},
            "--on 'kubernetes': certify runs its jobs through local, mpirun, slurm",
        ),
        ({"nodes": 2, "mps": True}, "--mps: for virtual nodes sharing a GPU"),
        ({"nodes": 2, "budget_s": -1}, "give positive numbers"),
        ({}, "exactly one node source"),
    ],
)
def test_bad_requests_are_one_line(tmp_path: Path, request_fields: dict[str, object], message: str) -> None:
    with pytest.raises(UsageError, match=message.replace("(", r"\(").replace(")", r"\)")):
        prepare_certify(
            CertifyRequest.model_validate({"run_dir": tmp_path / "r", **request_fields}),
            Execution(environ={}),
        )
