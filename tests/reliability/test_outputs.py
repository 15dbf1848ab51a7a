"""Outputs are written as users expect: through symlinks, to devices and ``-`` in place, atomically only for
regular files; a directory, or a path under a regular file, is refused with one line.

Before ``gpufabric.outputs``, ``report -o`` and ``bench --out`` wrote a temporary file and renamed it over
the target: a symlink was replaced, a device node (as root) became an HTML file, ``-o -`` made a file
named ``-``, and ``-o empty.txt/r.html`` said ``File exists (empty.txt)``.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from gpufabric.outputs import write_output

FIXTURE = (
    Path(__file__).resolve().parents[1] / "fixtures" / "nccl_tests" / "constructed_kubectl_ansi_crlf.log"
)


def gpufabric(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpufabric.cli", *args],
        cwd=cwd, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


@pytest.fixture
def null_device(tmp_path: Path) -> Path:
    """A character device to write to. As root, a private null device (mknod) so that a regression
    replaces a node in the test's directory, never the system's /dev/null; otherwise /dev/null itself,
    which a non-root user cannot replace anyway."""
    if os.geteuid() == 0:
        node = tmp_path / "null"
        os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        return node
    return Path("/dev/null")


def test_report_to_a_device_leaves_the_device(tmp_path: Path, null_device: Path) -> None:
    proc = gpufabric("report", str(FIXTURE), "--out", str(null_device), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert stat.S_ISCHR(os.stat(null_device).st_mode), "the device node was replaced"


def test_report_through_a_symlink_writes_its_target(tmp_path: Path) -> None:
    (tmp_path / "reports").mkdir()
    link = tmp_path / "latest.html"
    link.symlink_to(Path("reports") / "r1.html")  # relative, dangling until written
    proc = gpufabric("report", str(FIXTURE), "--out", "latest.html", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert link.is_symlink(), "the symlink was replaced by a file"
    assert (tmp_path / "reports" / "r1.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_report_to_dash_prints_to_stdout(tmp_path: Path) -> None:
    proc = gpufabric("report", str(FIXTURE), "--out", "-", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("<!DOCTYPE html>")
    assert not (tmp_path / "-").exists()


def test_compare_output_dash_prints_to_stdout(tmp_path: Path) -> None:
    proc = gpufabric("compare", str(FIXTURE), str(FIXTURE), "--output", "-", "--format", "csv", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("collective,")
    assert not (tmp_path / "-").exists()


def test_a_directory_is_refused_with_one_line(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    proc = gpufabric("report", str(FIXTURE), "--out", "out", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "Error: --output out: cannot write: it is a directory; give a file path in a place you can write"
    ]


def test_a_path_under_a_file_names_the_file(tmp_path: Path) -> None:
    (tmp_path / "empty.txt").write_text("", encoding="utf-8")
    for target in ("empty.txt/r.html", "empty.txt/x/r.html"):
        proc = gpufabric("report", str(FIXTURE), "--out", target, cwd=tmp_path)
        assert proc.returncode == 2
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and "empty.txt is a file, not a directory" in lines[0], proc.stderr
        assert "File exists" not in lines[0]
    proc = gpufabric("bench", "--ranks", "2", "--out", "empty.txt/x.json", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        "Error: --out: empty.txt/x.json: empty.txt is a file, not a directory; choose another path"
    )


def test_regular_files_are_replaced_atomically_keeping_their_mode(tmp_path: Path) -> None:
    target = tmp_path / "r.json"
    target.write_text("old\n", encoding="utf-8")
    target.chmod(0o640)
    write_output(target, "new\n")
    assert target.read_text(encoding="utf-8") == "new\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]  # no temporary file left behind


def test_a_fifo_is_written_in_place(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[str] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text(encoding="utf-8")))
    reader.start()
    write_output(fifo, "through the pipe\n")
    reader.join(timeout=30)
    assert received == ["through the pipe\n"]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_bench_out_to_a_device_and_to_dash(tmp_path: Path, null_device: Path) -> None:
    small = ["--ranks", "2", "-b", "64", "-e", "256", "-f", "4", "-n", "1", "-w", "1", "--batches", "2"]
    proc = gpufabric("bench", *small, "--out", str(null_device), "--run-dir", "r1", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert stat.S_ISCHR(os.stat(null_device).st_mode)
    proc = gpufabric("bench", *small, "--out", "-", "--run-dir", "r2", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    import json

    assert json.loads(proc.stdout)["schema_version"] == 1  # stdout is the one JSON document
    assert "# gpufabric" in proc.stderr  # the table went to stderr
    assert not (tmp_path / "-").exists()
