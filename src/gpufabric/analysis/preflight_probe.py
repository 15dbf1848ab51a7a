"""The seams preflight looks at the node through: environment, a filesystem root, a command runner, a
disk-size reader and torch's GPU count. Tests pass a fake root and runner; the CLI passes the real node.

Nothing here judges; ``analysis/preflight.py`` turns what these return into verdicts.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict

# Where libfabric's tools live on AWS images when they are not on PATH.
EXTRA_TOOL_DIRS = ("/opt/amazon/efa/bin",)


class CommandOutput(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    returncode: int
    stdout: str
    stderr: str = ""


Runner = Callable[[Sequence[str], Mapping[str, str]], CommandOutput | None]


def run_command(argv: Sequence[str], environ: Mapping[str, str]) -> CommandOutput | None:
    """Run a probe command with a short timeout; None when the tool is not installed."""
    search = os.pathsep.join([environ.get("PATH", os.defpath), *EXTRA_TOOL_DIRS])
    tool = shutil.which(argv[0], path=search)
    if tool is None:
        return None
    try:
        done = subprocess.run(
            [tool, *argv[1:]], capture_output=True, text=True, timeout=20, env=dict(environ), check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return CommandOutput(returncode=-1, stdout="", stderr=str(exc))
    return CommandOutput(returncode=done.returncode, stdout=done.stdout, stderr=done.stderr)


def disk_total_bytes(path: Path) -> int | None:
    try:
        return shutil.disk_usage(path).total
    except OSError:
        return None


# One line of torch/version.py (`cuda: Optional[str] = '12.4'`); no class crosses a newline, so many
# `cuda:` lines without `=` cost linear work, not a rescan of the file each.
_TORCH_CUDA = re.compile(r"^cuda[ \t]*(?::[^=\n]*)?=[ \t]*(?P<value>None|['\"][^'\"\n]*['\"])", re.MULTILINE)


def torch_gpu_count() -> int | None:
    """GPUs torch can see (honours CUDA_VISIBLE_DEVICES); None without a CUDA build of torch.

    torch's version.py is read first, so a CPU wheel (whose zero proves nothing) is never imported.
    """
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return None
    version_file = Path(next(iter(spec.submodule_search_locations))) / "version.py"
    try:
        cuda = _TORCH_CUDA.search(version_file.read_text(encoding="utf-8"))
    except OSError:
        cuda = None
    if cuda is None or cuda.group("value") == "None":
        return None
    import torch

    return int(torch.cuda.device_count())


@dataclass(frozen=True)
class Probe:
    """How preflight sees the node. Paths are read under ``root`` so a test can stage a fake node."""

    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    root: Path = Path("/")
    run: Runner = run_command
    disk_total: Callable[[Path], int | None] = disk_total_bytes
    torch_gpus: Callable[[], int | None] = torch_gpu_count

    def path(self, absolute: str) -> Path:
        return self.root / absolute.lstrip("/")

    def command(self, *argv: str) -> CommandOutput | None:
        return self.run(argv, self.environ)

    def listdir(self, absolute: str) -> list[str] | None:
        """Sorted entry names, or None when the directory does not exist."""
        directory = self.path(absolute)
        if not directory.is_dir():
            return None
        return sorted(entry.name for entry in directory.iterdir())

    def read(self, absolute: str) -> str | None:
        try:
            return self.path(absolute).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
