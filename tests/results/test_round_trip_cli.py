"""``bench > f; show f; compare f g; report f --out r.html`` for every format, on a real 2-rank gloo run.

One real bench (CPU gloo ranks, tiny sizes) prints the table users keep; ``show --format`` turns its
result into csv, markdown and json; the run directory holds the JSONL stream. Every one of those files
must go back through ``show``, ``compare`` and ``report`` with exit 0, and ``show`` must print the same
rows from each.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # one real gloo bench and ~25 CLI processes: about a minute

CLI = [sys.executable, "-m", "gpufabric.cli"]
FORMATS = ("csv", "markdown", "json")


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=300, check=False,
                          cwd=cwd, env=dict(os.environ))  # fmt: skip


def _rows(table: str) -> list[list[str]]:
    """The data rows of a printed table, size..root and the printed #wrong columns."""
    rows = [line.split() for line in table.splitlines() if line.strip() and not line.startswith("#")]
    return [[*row[:5], row[8], row[12]] for row in rows]


@pytest.fixture(scope="module")
def kept(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The files a user keeps from one gloo bench: its table output, the other formats, the stream."""
    tmp = tmp_path_factory.mktemp("round_trip_cli")
    run_dir = tmp / "run"
    done = _cli("bench", "--ranks", "2", "--backend", "gloo", "-c", "all_reduce,all_gather", "-b", "8",
                "-e", "64", "-f", "8", "--iters", "2", "--warmup", "1", "--batches", "2",
                "--run-dir", str(run_dir), cwd=tmp)  # fmt: skip
    assert done.returncode == 0, done.stderr
    files = {"table": tmp / "bench.txt", "jsonl": run_dir / "result.jsonl"}
    files["table"].write_text(done.stdout, encoding="utf-8")
    for fmt in FORMATS:
        shown = _cli("show", "--format", fmt, str(run_dir / "result.json"), cwd=tmp)
        assert shown.returncode == 0, shown.stderr
        files[fmt] = tmp / f"bench.{ {'markdown': 'md'}.get(fmt, fmt) }"
        files[fmt].write_text(shown.stdout, encoding="utf-8")
        if fmt == "json":
            (tmp / "shown-from-json.txt").write_text(_cli("show", str(files[fmt]), cwd=tmp).stdout)
    return files


@pytest.mark.parametrize("fmt", ["table", "jsonl", *FORMATS])
def test_every_kept_format_goes_through_show_compare_and_report(kept: dict[str, Path], fmt: str) -> None:
    path, other = kept[fmt], kept["table"]
    shown = _cli("show", str(path), cwd=path.parent)
    assert shown.returncode == 0, shown.stderr
    original = (kept["json"].parent / "shown-from-json.txt").read_text()
    assert _rows(shown.stdout) == _rows(original)
    assert "# gpufabric" in shown.stdout and "all_gather" in shown.stdout
    compared = _cli("compare", str(path), str(other), "--label", "kept", "--label", "table", cwd=path.parent)
    assert compared.returncode == 0, compared.stderr
    assert "all_reduce" in compared.stdout and "all_gather" in compared.stdout
    html = path.parent / f"report-{fmt}.html"
    reported = _cli("report", str(path), "--out", str(html), cwd=path.parent)
    assert reported.returncode == 0, reported.stderr
    assert html.stat().st_size > 10_000


def test_the_printed_table_keeps_the_engine_facts(kept: dict[str, Path]) -> None:
    shown = _cli("show", "--format", "json", str(kept["table"]), cwd=kept["table"].parent)
    assert shown.returncode == 0, shown.stderr
    assert '"engine": "gpufabric"' in shown.stdout and '"backend": "gloo"' in shown.stdout
    assert '"nranks": 2' in shown.stdout
