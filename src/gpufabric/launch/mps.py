"""A private CUDA MPS control daemon for one job (several ranks on one GPU, as virtual nodes need).

Without MPS, processes that share a GPU time-slice it: on one H100 a small all_reduce between two
virtual nodes took ~4.5 ms; with an MPS control daemon started for the run it took 23-33 us. The daemon
gets its own pipe and log directories (``CUDA_MPS_PIPE_DIRECTORY``, ``CUDA_MPS_LOG_DIRECTORY``), so it
never touches another job's MPS, and every rank gets the same two variables. ``quit`` stops it afterwards.

The pipe directory holds the daemon's Unix sockets, whose paths the kernel limits to 107 bytes
(``sun_path``): under a deep run directory (pytest's ``tmp_path`` was one) ``nvidia-cuda-mps-control -d``
exited 1 with no word, so every virtual node failed in 4 s. A run directory too deep for it gets a short
pipe directory under the system's temporary directory instead, named from the run directory so that the
daemon and mpirun's ``-x`` variables agree on it; the logs stay in the run directory.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from gpufabric.boundary_names import MPS_PIPE_ENV
from gpufabric.errors import LaunchError, UsageError

CONTROL = "nvidia-cuda-mps-control"


SOCKET_PATH_LIMIT = 107
# Room for the names MPS gives its sockets and pipes inside the directory (``control``, ``control_lock``,
# the server's per-client pipes), with a margin: only the directory's own length is ours to choose.
SOCKET_NAME_ROOM = 40


def pipe_directory(root: Path) -> Path:
    """``root/pipe``, or a short directory of its own under the temporary directory when that is too long."""
    wanted = Path(root) / "pipe"
    if len(os.fsencode(str(wanted.absolute()))) + SOCKET_NAME_ROOM <= SOCKET_PATH_LIMIT:
        return wanted
    digest = hashlib.sha256(os.fsencode(str(Path(root).absolute()))).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"gpufabric-mps-{digest}"


def mps_env(root: Path) -> dict[str, str]:
    return {MPS_PIPE_ENV: str(pipe_directory(root)), "CUDA_MPS_LOG_DIRECTORY": str(root / "log")}


def check_available() -> str:
    """The control binary's path, or a one-line UsageError saying why MPS cannot run here."""
    path = shutil.which(CONTROL)
    if path is None:
        raise UsageError(
            f"--mps: {CONTROL} is not on PATH (it ships with the NVIDIA driver/CUDA); install it or drop "
            "--mps (then ranks sharing a GPU time-slice it and small-message times are not meaningful)"
        )
    return path


@contextmanager
def mps_daemon(root: Path | None = None, *, timeout_s: float = 20.0) -> Iterator[dict[str, str]]:
    """Start a private MPS control daemon; yield the environment its clients need; stop it."""
    control = check_available()
    base = Path(root) if root is not None else Path(tempfile.mkdtemp(prefix="gpufabric-mps-"))
    env = mps_env(base)
    for path in env.values():
        Path(path).mkdir(parents=True, exist_ok=True)
    full = {**os.environ, **env}
    try:
        started = subprocess.run([control, "-d"], env=full, capture_output=True, text=True,
                                 timeout=timeout_s, check=False)  # fmt: skip
    except (OSError, subprocess.SubprocessError) as exc:
        raise LaunchError(f"--mps: could not start {CONTROL} ({exc})") from exc
    if started.returncode != 0:
        detail = " ".join((started.stderr or started.stdout).split())[:200]
        raise LaunchError(f"--mps: {CONTROL} -d exited {started.returncode} ({detail}); drop --mps")
    try:
        yield env
    finally:
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            subprocess.run([control], input="quit\n", env=full, capture_output=True, text=True,
                           timeout=timeout_s, check=False)  # fmt: skip
        pipe = Path(env[MPS_PIPE_ENV])
        if pipe != base / "pipe":  # the short directory made for a deep run directory: ours to remove
            shutil.rmtree(pipe, ignore_errors=True)
