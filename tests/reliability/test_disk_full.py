"""A full disk under the run directory, and a full device behind standard output: one line, exit 2, and
nothing half-written.

Checked on a real 64 KiB tmpfs mounted for the test (root; skipped with the reason otherwise), filled to
several levels so that the disk fills while ``config.json``, ``plan.json``, the rows of ``result.jsonl``
or ``result.json`` are written. Before: a traceback at every level, an empty ``plan.json``, a
``result.jsonl`` cut mid-line, empty error files and ``.tmp`` files left behind; ``> /dev/full`` gave a
44-line traceback from the redaction layer's stream.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from gpufabric.outputs import atomic_write_text
from gpufabric.results.io import StreamWriter
from gpufabric.results.model import Row

TMPFS_KIB = 64


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={TMPFS_KIB}k", "tmpfs", str(mount)],
                          capture_output=True, text=True, check=False)  # fmt: skip
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {done.stderr.strip()[:120]}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(disk: Path, leave_kib: int) -> None:
    """Leave about ``leave_kib`` KiB free on ``disk`` (tmpfs counts 4 KiB pages)."""
    free = os.statvfs(disk).f_bavail * os.statvfs(disk).f_frsize
    with open(disk / "filler", "wb") as handle:
        handle.write(b"\0" * max(0, free - leave_kib * 1024))


def gpufabric(
    *args: str, cwd: Path, stdout: int | None = subprocess.PIPE
) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gpufabric.cli", *args], cwd=cwd, stdout=stdout,
                          stderr=subprocess.PIPE, text=True, timeout=300, check=False)  # fmt: skip


def assert_nothing_half_written(run_dir: Path) -> None:
    files = [p for p in run_dir.rglob("*") if p.is_file()] if run_dir.exists() else []
    assert not [p for p in files if p.name.endswith(".tmp")], "temporary files left behind"
    assert not [p for p in files if p.stat().st_size == 0], "empty files left behind"
    for path in files:
        if path.suffix == ".json":
            json.loads(path.read_text())  # whole, or absent
        elif path.suffix == ".jsonl":
            text = path.read_text()
            assert text.endswith("\n"), "result.jsonl ends with a cut line"
            assert all(json.loads(line) for line in text.splitlines())


def test_bench_on_a_filling_disk_fails_in_one_line_and_damages_nothing(
    small_disk: Path, tmp_path: Path
) -> None:
    failed = 0
    for leave in (0, 4, 8, 20):
        for old in small_disk.iterdir():
            subprocess.run(["rm", "-rf", str(old)], check=True)
        fill(small_disk, leave)
        run_dir = small_disk / "run"
        bench = ["bench", "--ranks", "2", "-b", "8", "-e", "1K", "--batches", "2", "-n", "2", "-w", "0"]
        proc = gpufabric(*bench, "--run-dir", str(run_dir), cwd=tmp_path)
        assert "Traceback" not in proc.stderr
        assert_nothing_half_written(run_dir)
        if proc.returncode == 0:
            continue
        failed += 1
        lines = proc.stderr.strip().splitlines()
        assert proc.returncode == 2, proc.stderr
        assert len(lines) == 1 and lines[0].startswith("Error: "), proc.stderr
        assert (
            "No space left on device" in lines[0]
            and " free there" in lines[0]
            and str(small_disk) in lines[0]
        )
        stream = run_dir / "result.jsonl"
        if stream.exists():  # the finished rows are kept and still read
            shown = gpufabric("show", str(stream), cwd=tmp_path)
            assert shown.returncode == 0, shown.stderr
    assert failed >= 3, "the disk never filled: the test did not test anything"


def test_a_stream_record_is_whole_or_absent_when_the_disk_fills(small_disk: Path) -> None:
    writer = StreamWriter(small_disk / "result.jsonl")
    row = Row(size_bytes=8, count=2, dtype="float", redop="sum")
    written = 0
    with pytest.raises(OSError, match="No space left") as caught:
        while True:
            writer.row("all_reduce", 2, row)
            written += 1
    writer.close()
    assert caught.value.filename == str(small_disk / "result.jsonl")
    lines = (small_disk / "result.jsonl").read_text().splitlines()
    assert len(lines) == written and all(json.loads(line)["record"] == "row" for line in lines)


def test_an_atomic_write_on_a_full_disk_keeps_the_old_file_and_no_temporary(small_disk: Path) -> None:
    target = small_disk / "plan.json"
    target.write_text('{"old": true}\n')
    fill(small_disk, 0)
    with pytest.raises(OSError, match="No space left") as caught:
        atomic_write_text(target, json.dumps({"new": "x" * 100_000}))
    assert caught.value.filename == str(target)
    assert target.read_text() == '{"old": true}\n'
    assert sorted(p.name for p in small_disk.iterdir()) == ["filler", "plan.json"]


@pytest.mark.parametrize("args", [("plan", "--cloud", "aws", "-t", "p5.48xlarge"), ("catalog",), ("--help",)])
def test_standard_output_on_a_full_device_is_one_line_exit_2(args: tuple[str, ...], tmp_path: Path) -> None:
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full on this system")
    with open("/dev/full", "w") as full:
        proc = gpufabric(*args, cwd=tmp_path, stdout=full.fileno())
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        "Error: standard output: No space left on device while writing; free space on that device or "
        "redirect the output elsewhere"
    ]
