"""A file that is not UTF-8 (a UTF-16 export, a binary picked by mistake) given to any loader of a small
text file is one ``Error:`` line naming the flag and the byte, exit 2; before, five loaders raised a
``UnicodeDecodeError`` traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from gpufabric.errors import InputError
from gpufabric.inventory.kube_config import read_config

NOT_UTF8 = "node\xff1 slots=8\n".encode("latin-1")
UTF16 = "node1 slots=8\n".encode("utf-16")
PLAN = ["plan", "-t", "p4d.24xlarge", "--platform", "kubernetes"]


def gpufabric(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpufabric.cli", *args],
        cwd=cwd, capture_output=True, text=True, timeout=300, check=False, env=env,
    )  # fmt: skip


@pytest.mark.parametrize("content", [NOT_UTF8, UTF16], ids=["latin-1", "utf-16"])
@pytest.mark.parametrize(
    ("flag", "args"),
    [
        ("--hostfile", ["isolate", "--hostfile", "bad.txt"]),
        ("--hostfile", ["bench", "--on", "mpirun", "--hostfile", "bad.txt", "--dry-run", "--ranks", "2"]),
        ("--node-list", ["isolate", "--node-list", "bad.txt"]),
        (
            "--pod-config",
            [*PLAN, "--pod-config", "bad.txt"],
        ),
        (
            "--node-labels",
            [*PLAN, "--node-labels", "@bad.txt"],
        ),
    ],
)
def test_one_line_per_loader(tmp_path: Path, flag: str, args: list[str], content: bytes) -> None:
    (tmp_path / "bad.txt").write_bytes(content)
    proc = gpufabric(*args, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"Error: {flag} bad.txt: not UTF-8 text (byte 0x"), (
        proc.stderr
    )


def test_kube_config(tmp_path: Path) -> None:
    bad = tmp_path / "config"
    bad.write_bytes(b"apiVersion: v1\ncontexts: []\n# \xfe\n")
    with pytest.raises(InputError, match=r"^kube config .*config: not UTF-8 text \(byte 0xfe on line 3\)"):
        read_config([bad])
