"""What this install can do: each engine and client, installed or not, its version, and how to add it.

Nothing optional is imported: Python packages are looked up with ``importlib.util.find_spec`` and their
versions read from their metadata (``importlib.metadata``), so the table costs milliseconds even where
torch is installed. Programs are looked up on ``PATH``; mpirun and sbatch are asked for ``--version``
(bounded, a few milliseconds each). The extras themselves are defined in ``gpufabric._optional``.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from importlib import metadata
from pathlib import Path

from pydantic import BaseModel

from gpufabric import __version__
from gpufabric._optional import EXTRAS, install_line, is_installed
from gpufabric.capabilities.libnccl import find_libnccl

Runner = Callable[[list[str]], tuple[str, str] | None]
"""Runs a short command and returns (stdout, stderr), or None when it could not run."""
_VERSION_LINE = re.compile(r"\d+\.\d+")


class Capability(BaseModel):
    """One engine, client or program this install may use."""

    name: str
    installed: bool
    version: str | None = None
    detail: str | None = None
    """where it is, or what it lacks"""
    enables: str
    """the commands or modes it makes work"""
    extra: str | None = None
    """the gpufabric extra that adds it (None: not a Python package of ours)"""
    how_to_add: str


class EnvironmentReport(BaseModel):
    """``gpufabric env``: the versions of gpufabric and Python, and every capability."""

    gpufabric: str
    python: str
    executable: str
    capabilities: list[Capability]


def distribution_version(name: str) -> str | None:
    """The installed version of the PyPI package ``name``, or None."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def run_version(argv: list[str]) -> tuple[str, str] | None:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout, out.stderr


def torch_build() -> str | None:
    """What the torch wheel was built for, read from its ``version.py`` without importing torch."""
    spec_dirs = _package_dirs("torch")
    if not spec_dirs:
        return None
    try:
        text = (spec_dirs[0] / "version.py").read_text(encoding="utf-8")
    except OSError:
        return None
    cuda = re.search(r"^cuda\s*(?::[^=]*)?=\s*['\"]?([\w.]+)", text, re.MULTILINE)
    if cuda is None or cuda.group(1) == "None":
        return "CPU build: gloo ranks only, no NCCL"
    return f"CUDA {cuda.group(1)} build"


def _package_dirs(module: str) -> list[Path]:
    import importlib.util

    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return []
    if spec is None or not spec.submodule_search_locations:
        return []
    return [Path(p) for p in spec.submodule_search_locations]


def _python_package(
    name: str, distributions: tuple[str, ...], modules: tuple[str, ...], enables: str, extra: str
) -> Capability:
    versions = {d: distribution_version(d) for d in distributions}
    present = all(is_installed(m) for m in modules) and all(versions.values())
    missing = [d for d, v in versions.items() if v is None]
    shown = ", ".join(f"{d} {v}" for d, v in versions.items() if v) or None
    return Capability(
        name=name, installed=present, version=shown,
        detail=f"missing: {', '.join(missing)}" if missing and shown else None,
        enables=enables, extra=extra, how_to_add=install_line(extra),
    )  # fmt: skip


def _program(
    name: str, binary: str, enables: str, how_to_add: str, environ: Mapping[str, str], run: Runner
) -> Capability:
    path = shutil.which(binary, path=environ.get("PATH"))
    version, detail = None, path
    if path is not None:
        stdout, stderr = run([path, "--version"]) or ("", "")
        lines = [line.strip() for line in stdout.splitlines() if _VERSION_LINE.search(line)]
        errors = [line.strip() for line in stderr.splitlines() if line.strip()]
        if lines:
            version = lines[0]
        elif errors:  # e.g. sbatch on a host with no Slurm config: "fatal: Could not establish ..."
            detail = f"{path} (--version: {errors[-1]})"
    return Capability(name=name, installed=path is not None, version=version, detail=detail,
                      enables=enables, how_to_add=how_to_add)  # fmt: skip


def _nccl_tests(environ: Mapping[str, str]) -> Capability:
    from gpufabric.engines.nccl_tests import locate_binary
    from gpufabric.errors import UsageError

    try:
        path: str | None = str(locate_binary("all_reduce", environ=environ).parent)
    except UsageError:
        path = None
    return Capability(
        name="nccl-tests binaries", installed=path is not None, detail=path,
        enables="bench --engine nccl-tests",
        how_to_add="build NVIDIA/nccl-tests (make MPI=1); put build/ on PATH or pass --nccl-tests-dir",
    )  # fmt: skip


def _libnccl(environ: Mapping[str, str]) -> Capability:
    found = find_libnccl(environ)
    version = None
    if found is not None and found.version:
        version = found.version + (f"+cuda{found.cuda}" if found.cuda else "")
    return Capability(
        name="libnccl (NCCL)", installed=found is not None, version=version,
        detail=f"{found.path} (via {found.found_via})" if found else None,
        enables="the direct NCCL engine (torch's CUDA wheels carry their own)",
        how_to_add="pip install nvidia-nccl-cu12 (or -cu13), or the system's libnccl2 package",
    )  # fmt: skip


def probe_environment(environ: Mapping[str, str], *, run: Runner = run_version) -> EnvironmentReport:
    """Every capability of this install, looked up without importing any optional package."""
    torch = _python_package("torch engine", ("torch",), ("torch",),
                            "bench, tune, isolate, train-bench",
                            "torch")  # fmt: skip
    if torch.installed:
        torch.detail = torch_build()
    capabilities = [
        _python_package("gpu engine", EXTRAS["gpu"].distributions, EXTRAS["gpu"].modules,
                        "bench/tune --engine nccl: NCCL called directly", "gpu"),
        _libnccl(environ),
        torch,
        _python_package("kubernetes client", ("kubernetes",), ("kubernetes", "urllib3"),
                        "nodes, plan --from-cluster, launch --on kubernetes", "kubernetes"),
        _python_package("manifest schema check", ("kubernetes-validate",), ("kubernetes_validate",),
                        "launch --on kubernetes: manifests checked", "kubernetes"),
        _nccl_tests(environ),
        _program("mpirun", "mpirun", "--on mpirun",
                 "the system's Open MPI (apt install openmpi-bin)", environ, run),
        _program("sbatch (Slurm)", "sbatch", "--on slurm",
                 "run on a Slurm login node (or apt install slurm-client)", environ, run),
        _program("sky (SkyPilot)", "sky", "launch --on skypilot", 'pip install "skypilot[aws,gcp]"',
                 environ, run),
    ]  # fmt: skip
    return EnvironmentReport(
        gpufabric=__version__,
        python=".".join(str(v) for v in sys.version_info[:3]),
        executable=sys.executable,
        capabilities=capabilities,
    )
