"""This host's GPUs as ``nvidia-smi -L`` lists them, asked once per process and, where a command knows it
will ask, started ahead (issue 36).

Preparing one run asks for the host's GPUs four times or more, and each ``nvidia-smi`` starts NVML anew
while the ranks wait to be started, so the answer is kept (``listed_gpus``). ``gpufabric bench``, which
starts its local ranks before its plan (``cli.bench_early``), starts the listing first (``start_listing``):
its ranks' CUDA contexts, made meanwhile, slow NVML's answers (a rank's ``nvidia-smi topo -m`` took
1.3 s beside them on 4 H200s), and the plan asks for the listing while they are made. Standard library
only, so the early start can import it.
"""

from __future__ import annotations

import contextlib
import functools
import shutil
import subprocess

LISTING_TIMEOUT_S = 20
_AHEAD: dict[str, subprocess.Popen[str]] = {}


def start_listing(nvidia_smi: str | None = None) -> None:
    """Start ``nvidia-smi -L`` now; ``listed_gpus`` reads its answer when first asked."""
    path = nvidia_smi or shutil.which("nvidia-smi")
    if path is None or path in _AHEAD:
        return
    with contextlib.suppress(OSError):  # asked again, and refused the same way, when the plan asks
        _AHEAD[path] = subprocess.Popen(
            [path, "-L"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            text=True,
        )


@functools.cache
def listed_gpus(nvidia_smi: str | None) -> tuple[str, ...]:
    """The ids (``0``..``N-1``) of the GPUs ``nvidia-smi -L`` lists, asked once per process (and per
    nvidia-smi found); none without nvidia-smi or when it fails."""
    if nvidia_smi is None:
        return ()
    ahead = _AHEAD.pop(nvidia_smi, None)
    try:
        if ahead is not None:
            stdout, _ = ahead.communicate(timeout=LISTING_TIMEOUT_S)
            code = ahead.returncode
        else:
            out = subprocess.run([nvidia_smi, "-L"], capture_output=True, text=True,
                                 timeout=LISTING_TIMEOUT_S, check=False)  # fmt: skip
            stdout, code = out.stdout, out.returncode
    except (OSError, subprocess.SubprocessError):
        if ahead is not None:
            ahead.kill()
            ahead.wait()
        return ()
    if code != 0:
        return ()
    return tuple(str(i) for i, line in enumerate(x for x in stdout.splitlines() if x.startswith("GPU ")))
