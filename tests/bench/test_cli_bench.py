"""``gpufabric bench`` through the real console entry point: tables, formats, and bad input (exit 2)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

CLI = [sys.executable, "-m", "gpufabric.cli", "bench"]


def _run(
    args: list[str], env: dict[str, str] | None = None, timeout: float = 180
) -> subprocess.CompletedProcess[str]:
    import os

    return subprocess.run(
        [*CLI, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env={**os.environ, **(env or {})},
    )


@pytest.mark.parametrize(
    ("args", "env", "named"),
    [
        (["-b", "2G", "-e", "1K"], None, "-b/-e"),
        (["-c", "allreduce_fast"], None, "-c/--collective"),
        (["--dtype", "float8"], None, "--dtype"),
        (["--op", "mean"], None, "--op"),
        (["--dtype", "uint32"], None, "--dtype"),  # gloo lacks uint32 (torch 2.13: "Invalid scalar type")
        (["--dtype", "int32", "--op", "avg"], None, "--op"),  # gloo's avg needs a floating type
        (["--graph"], None, "--graph"),
        (["--format", "xml"], None, "--format"),
        (["--env", "NOEQUALS"], None, "--env"),
        (["--precision", "150%"], None, "--precision"),
        (["-b", "lots"], None, "-b/--min-bytes"),
        (["--ranks", "4"], {"CUDA_VISIBLE_DEVICES": "0,1"}, "--ranks"),  # more ranks than GPUs
        (["-c", "broadcast", "--root", "7", "--ranks", "2"], None, "--root"),
        (["-e", "1T"], None, "-e/--max-bytes"),  # buffers larger than this host's (or a GPU's) memory
        (["--backend", "foo"], None, "--backend"),  # was an AssertionError inside every rank
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: list[str], env: dict[str, str] | None, named: str) -> None:
    proc = _run(args, env, timeout=120)
    assert proc.returncode == 2, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), proc.stderr
    assert named in lines[0]
    assert "Traceback" not in proc.stderr


def test_table_and_json_formats(tmp_path: Path) -> None:
    out = tmp_path / "copy.json"
    proc = _run(
        [
            "-c",
            "all_gather",
            "-b",
            "1K",
            "-e",
            "4K",
            "-f",
            "4",
            "--ranks",
            "2",
            "-n",
            "2",
            "--batches",
            "1",
            "--run-dir",
            str(tmp_path / "run"),
            "--out",
            str(out),
            "--label",
            "t",
        ]
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert any(line.startswith("#       size         count      type   redop    root") for line in lines)
    rows = [line.split() for line in lines if line and not line.startswith("#")]
    assert [r[:5] for r in rows] == [
        ["1024", "128", "float", "none", "-1"],
        ["4096", "512", "float", "none", "-1"],
    ]
    assert all(r[8] == "0" and r[12] == "0" for r in rows)  # #wrong out-of-place and in-place
    assert "# Avg bus bandwidth" in proc.stdout
    document = json.loads(out.read_text())
    assert document["label"] == "t" and document["series"][0]["collective"] == "all_gather"
    assert (tmp_path / "run" / "result.jsonl").exists()


def test_wrong_data_prints_the_table_then_exits_3_naming_the_rank(tmp_path: Path) -> None:
    out = tmp_path / "copy.json"
    proc = _run(
        ["-c", "all_reduce", "-b", "1K", "-e", "4K", "-f", "4", "--ranks", "2", "-n", "2", "--batches", "1",
         "--check", "--run-dir", str(tmp_path / "run"), "--out", str(out)],
        env={"GPUFABRIC_FAULT": "corrupt:rank=1"},
    )  # fmt: skip
    assert proc.returncode == 3, proc.stderr
    rows = [line.split() for line in proc.stdout.splitlines() if line and not line.startswith("#")]
    assert [r[0] for r in rows] == ["1024", "4096"], proc.stdout
    assert "# Avg bus bandwidth" in proc.stdout
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: --check: "), proc.stderr
    assert "rank 1" in lines[0] and "Traceback" not in proc.stderr
    for path in (tmp_path / "run" / "result.json", out):
        document = json.loads(path.read_text())
        assert document["complete"] is True  # every size ran ...
        failure = document["failure"]  # ... but the numbers are wrong, and the document says so
        assert failure.startswith("--check: ") and "wrong element(s); first: " in failure
        assert "rank 1" in failure


def test_one_rank_says_why_busbw_is_zero(tmp_path: Path) -> None:
    done = _run(["--ranks", "1", "-b", "8", "-e", "64", "--run-dir", str(tmp_path / "run")])
    assert done.returncode == 0, done.stderr
    assert "1 rank: nothing crosses a link, so busbw is 0 by definition" in done.stdout
