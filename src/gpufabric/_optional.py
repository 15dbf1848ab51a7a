"""The optional extras: which command needs which, and the one-line error when one is missing.

``pip install gpufabric`` runs every command that needs no engine and no cluster client (readers,
compare, report, catalog, plan, doctor, ``isolate --simulate``, ``launch --dry-run``). The rest need an
extra, and import it only when they run, through ``require`` (or check for it with ``ensure_installed``
where only their ranks import it):

    torch        torch>=2.1: the torch.distributed engine (gloo on CPU, NCCL on GPUs), ``train-bench``
    kubernetes   the official client: ``nodes``, ``plan --from-cluster``, ``launch --on kubernetes``
    gpu          nccl4py + cuda-bindings (+ cuda-core): the direct NCCL engine, no torch in the ranks
    all          every extra above

A missing extra is a ``UsageError`` (exit 2) that names the command, the package and the pip line, so the
CLI prints one line and no traceback. ``gpufabric env`` (``gpufabric.capabilities``) lists the same table
for this install.
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass
from types import ModuleType

from gpufabric.errors import UsageError


@dataclass(frozen=True)
class Extra:
    """One ``pip install "gpufabric[NAME]"`` extra and what it brings."""

    name: str
    distributions: tuple[str, ...]
    """the PyPI packages the extra installs (as pyproject.toml names them)"""
    modules: tuple[str, ...]
    """the import names those packages provide; all of them must be importable"""
    brings: str
    """what a user gets, in the words of the README"""


EXTRAS: dict[str, Extra] = {
    extra.name: extra
    for extra in (
        Extra("torch", ("torch",), ("torch",), "the torch.distributed engine (gloo on CPU), train-bench"),
        Extra(
            "kubernetes",
            ("kubernetes",),
            ("kubernetes", "urllib3"),
            "nodes, plan --from-cluster, launch --on kubernetes",
        ),
        # engines/nccl imports nccl4py's low-level bindings and cuda-bindings' runtime (cuda-core comes
        # with nccl4py); nccl4py's own metadata leaves cuda-bindings to its cu12/cu13 extras.
        Extra(
            "gpu",
            ("nccl4py", "cuda-bindings"),
            ("nccl.bindings", "cuda.bindings"),
            "the direct NCCL engine (no torch in the ranks)",
        ),
    )
}
"""Every extra but ``all`` (which is all of them)."""


# Import names whose PyPI package is named otherwise (the message names what pip installs).
_PACKAGES = {"nccl": "nccl4py", "cuda.bindings": "cuda-bindings", "cuda.core": "cuda-core"}


def package_name(module: str) -> str:
    """The PyPI package that provides ``module`` (``nccl.bindings`` -> ``nccl4py``)."""
    for prefix, package in _PACKAGES.items():
        if module == prefix or module.startswith(prefix + "."):
            return package
    return module.split(".")[0]


def install_line(extra: str) -> str:
    """The pip command that adds ``extra``, quoted for every shell (zsh globs bare brackets)."""
    return f'pip install "gpufabric[{extra}]"'


def is_installed(module: str) -> bool:
    """Whether ``module`` can be found, without importing it (torch takes seconds to import)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package is missing, or a half-removed install
        return False


def ensure_installed(module: str, *, extra: str, for_what: str, instead: str | None = None) -> None:
    """Raise the one line that says what to install when ``module`` of the optional ``extra`` is missing.

    Nothing is imported: the engine commands check here for what their ranks will import, so the
    parent process never pays for torch. ``for_what`` names the command or mode that needs it
    (``"gpufabric bench"``); ``instead``, a way to do without it (``"--engine nccl-tests, which needs no
    torch"``).
    """
    if extra not in EXTRAS:
        raise ValueError(f"unknown extra {extra!r}; choose from {', '.join(EXTRAS)}")
    if not is_installed(module):
        alternative = f"; or use {instead}" if instead else ""
        raise UsageError(
            f"{for_what} needs {package_name(module)}, which is not installed: {install_line(extra)}"
            + alternative
        )


def require(module: str, *, extra: str, for_what: str, instead: str | None = None) -> ModuleType:
    """``module`` imported, after ``ensure_installed``. An installed module that fails to import (a broken
    wheel, a missing system library) is reported with its own error, so a reinstall is not suggested for
    a problem it would not fix."""
    ensure_installed(module, extra=extra, for_what=for_what, instead=instead)
    try:
        return importlib.import_module(module)
    except (ImportError, OSError) as exc:  # OSError: a shared library the wheel loads is missing
        detail = " ".join(str(exc).split())
        raise UsageError(
            f"{for_what} needs {module}, which is installed but does not import ({detail}); "
            f'reinstall it with pip install --force-reinstall "gpufabric[{extra}]"'
        ) from exc
