"""Fresh virtualenvs, one per install flavour, with this checkout's wheel (``conftest.py`` makes them once
per test session).

A new user runs ``python -m venv`` and ``pip install "gpufabric[EXTRA]"``; so does this module, in two
layers so that a busy 2-core machine does not spend minutes per session reinstalling torch:

- the flavour's dependencies: a virtualenv made with ``python -m venv`` and ``pip install WHEEL[EXTRA]``,
  then ``pip uninstall gpufabric``, so it holds exactly what the extra brings. It is kept in
  ``~/.cache/gpufabric-install-matrix/<key>/`` where the key hashes pyproject.toml's dependencies and
  extras, the Python version and the torch pin: a change to any dependency builds a new one. A file
  lock serializes sessions that build the same one.
- the session's own virtualenv per flavour: ``python -m venv``, a ``.pth`` line naming the dependency
  layer's site-packages, and this session's wheel installed with ``--no-deps``. The console script, the
  package and its metadata are this checkout's; nothing else is on the path (no checkout, no dev venv).

The resolution of ``gpufabric[all]`` (``pip install --dry-run``, a minute of index look-ups) is kept
beside the layers, under the same key.

``GPUFABRIC_FRESH_VENVS=1`` skips the cache: every flavour is installed from scratch, exactly as a user
would (minutes). The wheel is built from a clean copy of ``src/``, ``pyproject.toml`` and ``README.md``,
so files left in a stale ``build/`` can never reach it. Where ``/opt/wheels`` holds a CPU wheel of torch
(the project's CPU machines, as in the Makefile), the torch flavour takes it instead of PyPI's CUDA build.
A flavour that fails to install fails only the tests that use it, with pip's own last lines.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CPU_WHEELS = Path("/opt/wheels")
PIP_TIMEOUT_S = 540
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "gpufabric-install-matrix"
FRESH = os.environ.get("GPUFABRIC_FRESH_VENVS") == "1"
FLAVOURS: dict[str, str] = {"plain": "", "kubernetes": "[kubernetes]", "torch": "[torch]", "gpu": "[gpu]"}
"""flavour name -> the extras part of ``pip install gpufabric[...]``"""


def clean_env(**extra: str) -> dict[str, str]:
    """This environment without anything that would put the checkout or another venv on the path."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    return {**env, "PYTHONDONTWRITEBYTECODE": "1", **extra}


def tail(text: str, lines: int = 15) -> str:
    return "\n".join(text.splitlines()[-lines:])


def torch_pins() -> list[str]:
    """pip arguments that take torch from the CPU wheels on disk, when there are any (else: PyPI)."""
    wheels = sorted(CPU_WHEELS.glob("torch-*.whl"))
    if not wheels:
        return []
    version = wheels[-1].name.split("-")[1]  # torch-2.13.0+cpu-cp311-... -> 2.13.0+cpu
    return ["--find-links", str(CPU_WHEELS), f"torch=={version}"]


def build_wheel(out: Path) -> Path:
    source = out / "source"
    shutil.copytree(
        REPO / "src", source / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "*.pyc")
    )
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, source / name)
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(source)],
        capture_output=True, text=True, env=clean_env(), timeout=PIP_TIMEOUT_S, check=False,
    )  # fmt: skip
    wheels = list(out.glob("gpufabric-*.whl"))
    if result.returncode != 0 or len(wheels) != 1:
        pytest.fail(f"pip wheel of the checkout failed:\n{tail(result.stderr)}")
    return wheels[0]


@dataclass
class Venv:
    """One fresh virtualenv with gpufabric installed (or the reason it could not be)."""

    name: str
    root: Path
    install_error: str | None = None

    @property
    def bin(self) -> Path:
        return self.root / "bin"

    def ready(self) -> Venv:
        if self.install_error:
            pytest.fail(f"installing the {self.name} flavour failed:\n{self.install_error}")
        return self

    def gpufabric(self, *args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        """Run the installed console script, as a user would, from ``cwd`` (never the checkout)."""
        return subprocess.run(
            [str(self.bin / "gpufabric"), *args], capture_output=True, text=True, cwd=cwd,
            env=clean_env(COLUMNS="200"), timeout=timeout, check=False,
        )  # fmt: skip

    def python(self, code: str, *, cwd: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.bin / "python"), "-c", code], capture_output=True, text=True, cwd=cwd,
            env=clean_env(), timeout=120, check=False,
        )  # fmt: skip


def run_steps(steps: list[list[str]], cwd: Path) -> str | None:
    """Run each command in turn; the failing command and pip's last lines, or None when all passed."""
    for argv in steps:
        result = subprocess.run(
            argv, capture_output=True, text=True, env=clean_env(), cwd=cwd, timeout=PIP_TIMEOUT_S,
            check=False,
        )  # fmt: skip
        if result.returncode != 0:
            return f"$ {' '.join(argv)}\n{tail(result.stderr or result.stdout)}"
    return None


def install_steps(venv: Path, extras: str, wheel: Path) -> list[list[str]]:
    pins = torch_pins() if "torch" in extras else []
    return [
        [sys.executable, "-m", "venv", str(venv)],
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", *pins, f"{wheel}{extras}"],
    ]


def site_packages(venv: Path) -> Path:
    return venv / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"


def cache_key() -> str:
    """What the layers depend on: pyproject's dependencies and extras (not its tool settings, which
    change often), the Python version and the torch pin."""
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    fields = {k: project.get(k) for k in ("dependencies", "optional-dependencies", "requires-python")}
    text = json.dumps(fields, sort_keys=True) + f"{sys.version} {' '.join(torch_pins())}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@contextmanager
def locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def dependency_layer(name: str, extras: str, wheel: Path) -> tuple[Path, str | None]:
    """The cached virtualenv holding exactly what ``gpufabric[extras]`` depends on (built when missing)."""
    layer = CACHE / cache_key() / name
    done = layer / ".complete"
    with locked(CACHE / cache_key() / f"{name}.lock"):
        if done.exists():
            return layer, None
        shutil.rmtree(layer, ignore_errors=True)  # a build that died half-way
        steps = install_steps(layer, extras, wheel)
        steps.append([str(layer / "bin" / "python"), "-m", "pip", "uninstall", "-q", "-y", "gpufabric"])
        error = run_steps(steps, CACHE)
        if error is None:
            done.touch()
        return layer, error


def resolved_names(name: str, resolve: Callable[[Path], None]) -> set[str]:
    """The package names of a pip ``--report``: ``resolve(path)`` writes it, once per dependency set
    (pyproject.toml's hash, as for the layers) unless ``GPUFABRIC_FRESH_VENVS=1``."""
    report = CACHE / cache_key() / f"{name}-resolution.json"
    if FRESH or not report.exists():
        report.parent.mkdir(parents=True, exist_ok=True)
        partial = report.with_suffix(f".{os.getpid()}.partial")
        resolve(partial)
        partial.replace(report)
    return {item["metadata"]["name"].lower() for item in json.loads(report.read_text())["install"]}


def create(name: str, extras: str, wheel: Path, root: Path) -> Venv:
    """This session's virtualenv of one flavour, with the wheel of this checkout installed."""
    venv = Venv(name, root / name)
    if FRESH:
        venv.install_error = run_steps(install_steps(venv.root, extras, wheel), root)
        return venv
    layer, error = dependency_layer(name, extras, wheel)
    if error is not None:
        venv.install_error = error
        return venv
    venv.install_error = run_steps([[sys.executable, "-m", "venv", "--without-pip", str(venv.root)]], root)
    if venv.install_error is None:
        # After this venv's own site-packages: the dependencies (and the pip that installs the wheel).
        (site_packages(venv.root) / "gpufabric-deps.pth").write_text(f"{site_packages(layer)}\n")
        install = [str(venv.bin / "python"), "-m", "pip", "install", "-q", "--no-deps", str(wheel)]
        venv.install_error = run_steps([install], root)
    return venv


def version_of(wheel: Path) -> str:
    match = re.match(r"gpufabric-([^-]+)-", wheel.name)
    assert match, wheel.name
    return match.group(1)
