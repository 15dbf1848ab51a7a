"""Which libnccl the direct engine runs, loaded before nccl4py so that nccl4py binds to it.

nccl4py finds libnccl through cuda-pathfinder, which prefers an already-loaded library, then NVIDIA's pip
wheels, then the system's loader. On a cluster the NCCL that matters is the one the image or the DLAMI
provides, with its net plugin beside it (aws-ofi-nccl, Google's gIB/FasTrak): a wheel's copy found first
would silently measure something else. So the order here is the user's: ``--nccl-lib PATH``
(``GPUFABRIC_NCCL_LIB``), then the system loader (``LD_LIBRARY_PATH``, ld.so.conf: a container's NCCL),
and only then a wheel's copy, which the result then names as such.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from gpufabric.boundary_names import NCCL_LIB_ENV
from gpufabric.errors import UsageError

SONAME = "libnccl.so.2"
INSTALL_HINT = 'install the GPU engine: pip install "gpufabric[gpu]" (nccl4py, cuda-core, cuda-bindings)'
Origin = Literal["--nccl-lib", "system", "wheel"]


@dataclass(frozen=True)
class NcclLibrary:
    """The libnccl this process runs: its file, how it was found, and its version."""

    path: str
    origin: Origin
    version: str
    version_code: int

    def describe(self) -> str:
        how = {
            "--nccl-lib": "named by --nccl-lib",
            "system": "the system loader's (LD_LIBRARY_PATH / ld.so.conf)",
            "wheel": "a pip wheel's copy (no libnccl on LD_LIBRARY_PATH or the system path)",
        }[self.origin]
        return f"NCCL {self.version} from {self.path} ({how})"


def version_string(code: int) -> str:
    """NCCL's version code as x.y.z (codes since 2.9 are major*10000 + minor*100 + patch)."""
    if code >= 10000:
        return f"{code // 10000}.{code // 100 % 100}.{code % 100}"
    return f"{code // 1000}.{code // 100 % 10}.{code % 100}"


def _loaded_path(name_part: str) -> str | None:
    """The file of the first mapped library whose name contains ``name_part`` (Linux /proc maps)."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            for line in maps:
                path = line.rstrip("\n").split(maxsplit=5)[-1]
                if name_part in os.path.basename(path):
                    return path
    except OSError:
        return None
    return None


def _preload(environ: Mapping[str, str]) -> Origin | None:
    """dlopen libnccl from the user's choice or the system path (RTLD_GLOBAL); None if neither has it."""
    explicit = environ.get(NCCL_LIB_ENV)
    if explicit:
        if not os.path.isfile(explicit):
            raise UsageError(
                f"--nccl-lib: {explicit} is not a file; give the path of libnccl.so.2 "
                "(e.g. /usr/lib/x86_64-linux-gnu/libnccl.so.2 or $NCCL_HOME/lib/libnccl.so.2)"
            )
        try:
            ctypes.CDLL(explicit, mode=os.RTLD_GLOBAL)
        except OSError as exc:
            raise UsageError(f"--nccl-lib: {explicit} cannot be loaded ({exc}); name a libnccl.so.2") from exc
        return "--nccl-lib"
    try:
        ctypes.CDLL(SONAME, mode=os.RTLD_GLOBAL)
    except OSError:
        return None
    return "system"


def bindings() -> Any:
    """nccl4py's low-level module (``nccl.bindings.nccl``), or a one-line UsageError naming the extra."""
    try:
        from nccl.bindings import nccl as low_level
    except ImportError as exc:
        raise UsageError(f"--engine nccl: nccl4py is not installed ({exc}); {INSTALL_HINT}") from exc
    return low_level


def load(environ: Mapping[str, str] | None = None) -> NcclLibrary:
    """Load libnccl (see the module docstring) and return what was loaded; one-line UsageError if none."""
    environ = os.environ if environ is None else environ
    origin = _preload(environ)
    nccl = bindings()
    try:
        code = int(nccl.get_version())
    except Exception as exc:  # cuda-pathfinder's DynamicLibNotFoundError and friends
        raise UsageError(
            f"--engine nccl: no libnccl.so.2 could be loaded ({' '.join(str(exc).split())[:200]}); put your "
            f"NCCL's lib directory on LD_LIBRARY_PATH, pass --nccl-lib PATH, or pip install nvidia-nccl-cu12"
        ) from exc
    path = _loaded_path("libnccl") or str(nccl.get_library_path())
    return NcclLibrary(path=path, origin=origin or "wheel", version=version_string(code), version_code=code)


def require_version(library: NcclLibrary, minimum: tuple[int, int, int], what: str) -> None:
    """Refuse ``what`` (a collective or dtype) on an NCCL older than ``minimum``, in one line."""
    have = tuple(int(p) for p in library.version.split("."))
    if have < minimum:
        need = ".".join(str(p) for p in minimum)
        raise UsageError(
            f"{what} needs NCCL {need} or newer; this run loaded {library.describe()}; "
            "point --nccl-lib (or LD_LIBRARY_PATH) at a newer NCCL, or drop it"
        )
