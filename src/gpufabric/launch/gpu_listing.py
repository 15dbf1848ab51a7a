"""This host's GPUs as ``nvidia-smi`` answers (how many: ``-L``; the memory of each), asked once per
process and, where a command knows it will ask, started ahead (issue 36).

Preparing one run asks for the host's GPUs four times or more, and each ``nvidia-smi`` starts NVML anew
while the ranks wait to be started, so each answer is kept. ``gpufabric bench``, which starts its local
ranks before its plan (``cli.bench_early``), starts both questions with them (``start_listing``): the
ranks' CUDA contexts, made meanwhile, slow NVML's answers (a rank's ``nvidia-smi topo -m`` took 1.3 s
beside them on 4 H200s), and the plan asks both while they are made. Standard library only, so the
early start can import it.
"""

from __future__ import annotations

import contextlib
import functools
import shutil
import subprocess

ANSWER_TIMEOUT_S = 20
QUERIES: dict[str, tuple[str, ...]] = {
    "gpus": ("-L",),
    "memory": ("--query-gpu=memory.total", "--format=csv,noheader,nounits"),
}
"""The questions the plan asks ``nvidia-smi``, by name."""
_AHEAD: dict[tuple[str, str], subprocess.Popen[str]] = {}


def start_listing(nvidia_smi: str | None = None) -> None:
    """Start every question of ``QUERIES`` now; the first ask of each reads its answer."""
    path = nvidia_smi or shutil.which("nvidia-smi")
    if path is None:
        return
    for name, args in QUERIES.items():
        if (path, name) in _AHEAD:
            continue
        with contextlib.suppress(OSError):  # asked again, and refused the same way, when the plan asks
            _AHEAD[path, name] = subprocess.Popen(
                [path, *args], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                text=True,
            )  # fmt: skip


def _answer(nvidia_smi: str, name: str) -> str | None:
    """``nvidia-smi``'s answer to ``QUERIES[name]`` (the one started ahead, else asked now); None when
    it fails."""
    ahead = _AHEAD.pop((nvidia_smi, name), None)
    try:
        if ahead is not None:
            stdout, _ = ahead.communicate(timeout=ANSWER_TIMEOUT_S)
            code = ahead.returncode
        else:
            out = subprocess.run([nvidia_smi, *QUERIES[name]], capture_output=True, text=True,
                                 timeout=ANSWER_TIMEOUT_S, check=False)  # fmt: skip
            stdout, code = out.stdout, out.returncode
    except (OSError, subprocess.SubprocessError):
        if ahead is not None:
            ahead.kill()
            ahead.wait()
        return None
    return stdout if code == 0 else None


@functools.cache
def listed_gpus(nvidia_smi: str | None) -> tuple[str, ...]:
    """The ids (``0``..``N-1``) of the GPUs ``nvidia-smi -L`` lists, asked once per process (and per
    nvidia-smi found); none without nvidia-smi or when it fails."""
    stdout = _answer(nvidia_smi, "gpus") if nvidia_smi is not None else None
    if stdout is None:
        return ()
    return tuple(str(i) for i, line in enumerate(x for x in stdout.splitlines() if x.startswith("GPU ")))


@functools.cache
def gpu_memory_mib(nvidia_smi: str | None) -> tuple[int, ...]:
    """Each GPU's total memory in MiB as ``nvidia-smi`` reports it; none when it cannot tell."""
    stdout = _answer(nvidia_smi, "memory") if nvidia_smi is not None else None
    return tuple(int(v) for v in stdout.split() if v.isdigit()) if stdout is not None else ()
