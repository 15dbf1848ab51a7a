"""Which ``libnccl.so.2`` the direct NCCL engine would load, found without loading it.

``engines/nccl/library.py`` loads NCCL itself before nccl4py, so that the NCCL that matters on a cluster
(the image's or the system's, with its net plugin beside it) wins over a pip wheel's copy; only when
neither is there does nccl4py find one through ``cuda.pathfinder.load_nvidia_dynamic_lib("nccl")``. Asking
either would dlopen a 200 MB library just to print a table, so this module walks the same places in the
same order and only looks at files:

1. ``$GPUFABRIC_NCCL_LIB`` (``bench --nccl-lib``)
2. the dynamic loader's own search: ``LD_LIBRARY_PATH``, the ``ldconfig`` cache, the default directories
3. then cuda-pathfinder's (cuda-python's ``cuda_pathfinder/_dynamic_libs/search_steps.py`` and the
   ``nccl`` entry of ``descriptor_catalog.py``, cuda-pathfinder 1.9): site-packages ``nvidia/nccl/lib``
   (the ``nvidia-nccl-cu12`` / ``-cu13`` wheels, which torch pulls in), ``$CONDA_PREFIX/lib``,
   ``$NCCL_HOME/lib``, ``lib64``, ``build/lib``, then ``$CUDA_PATH`` / ``$CUDA_HOME``

The version is read from the banner NCCL compiles in (``NCCL version 2.28.9+cuda13.0``), as nccl4py's
``nccl.core.utils`` does for the library it loaded.
"""

from __future__ import annotations

import mmap
import re
import site
import subprocess
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path

from pydantic import BaseModel

from gpufabric.boundary_names import NCCL_LIB_ENV

SONAME = "libnccl.so.2"
SITE_PACKAGES_DIR = Path("nvidia/nccl/lib")
DEFAULT_DIRS = ("/lib64", "/usr/lib64", "/lib", "/usr/lib", "/usr/lib/x86_64-linux-gnu", "/usr/local/lib")
_BANNER = re.compile(rb"NCCL version (\d+\.\d+\.\d+)(?:\+cuda(\d+\.\d+))?")


class FoundLibrary(BaseModel):
    """A ``libnccl.so.2`` on disk: where, how it was found, and the version its banner names."""

    path: str
    found_via: str
    """--nccl-lib, LD_LIBRARY_PATH, ldconfig, system, site-packages (a wheel's copy), CONDA_PREFIX,
    NCCL_HOME, CUDA_PATH or CUDA_HOME"""
    version: str | None = None
    cuda: str | None = None
    """the CUDA version NCCL was built for (``+cuda12.9``), when the banner says"""


def site_packages() -> list[str]:
    """This interpreter's site-packages in cuda-pathfinder's order: a virtualenv's own first, then the
    user's, then the system's (``cuda_pathfinder/_utils/find_sub_dirs.py``)."""
    dirs = list(site.getsitepackages())
    user = site.getusersitepackages() if site.ENABLE_USER_SITE else None
    if user:
        dirs.insert(1 if sys.prefix != sys.base_prefix else 0, user)
    return dirs


def ldconfig_paths(soname: str = SONAME) -> list[str]:
    """The paths ``ldconfig -p`` lists for ``soname`` (none where ldconfig is missing or slow)."""
    for ldconfig in ("/sbin/ldconfig", "/usr/sbin/ldconfig", "ldconfig"):
        try:
            out = subprocess.run([ldconfig, "-p"], capture_output=True, text=True, timeout=5, check=False)
        except (OSError, subprocess.SubprocessError):
            continue
        # Lines look like: "\tlibnccl.so.2 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libnccl.so.2"
        return [
            line.split("=>", 1)[1].strip()
            for line in out.stdout.splitlines()
            if line.strip().startswith(soname + " ") and "=>" in line
        ]
    return []


def _candidates(
    environ: Mapping[str, str], site_dirs: Iterable[str], ldconfig: Callable[[], list[str]]
) -> Iterator[tuple[Path, str]]:
    if environ.get(NCCL_LIB_ENV):
        yield Path(environ[NCCL_LIB_ENV]), "--nccl-lib"
    for directory in environ.get("LD_LIBRARY_PATH", "").split(":"):
        if directory:
            yield Path(directory) / SONAME, "LD_LIBRARY_PATH"
    for path in ldconfig():
        yield Path(path), "ldconfig"
    for directory in DEFAULT_DIRS:
        yield Path(directory) / SONAME, "system"
    for directory in site_dirs:
        yield Path(directory) / SITE_PACKAGES_DIR / SONAME, "site-packages (a wheel's copy)"
    if environ.get("CONDA_PREFIX"):
        yield Path(environ["CONDA_PREFIX"]) / "lib" / SONAME, "CONDA_PREFIX"
    if environ.get("NCCL_HOME"):
        for rel in ("lib", "lib64", "build/lib"):
            yield Path(environ["NCCL_HOME"]) / rel / SONAME, "NCCL_HOME"
    for name in ("CUDA_PATH", "CUDA_HOME"):
        if environ.get(name):
            for rel in ("lib64", "lib"):
                yield Path(environ[name]) / rel / SONAME, name
            break  # cuda-pathfinder takes CUDA_PATH, else CUDA_HOME


def banner_version(path: Path) -> tuple[str | None, str | None]:
    """(NCCL version, CUDA version) from the library's banner; (None, None) when unreadable."""
    try:
        with path.open("rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
            match = _BANNER.search(data)
            # groups() copies the bytes out: a match cannot be read once its mmap is closed
            version, cuda = match.groups() if match else (None, None)
    except (OSError, ValueError):  # ValueError: mmap of an empty file
        return None, None
    return (version.decode() if version else None), (cuda.decode() if cuda else None)


def find_libnccl(
    environ: Mapping[str, str],
    *,
    site_dirs: Iterable[str] | None = None,
    ldconfig: Callable[[], list[str]] = ldconfig_paths,
) -> FoundLibrary | None:
    """The first ``libnccl.so.2`` in the direct engine's order, or None when there is none."""
    sites = site_packages() if site_dirs is None else site_dirs
    for path, found_via in _candidates(environ, sites, ldconfig):
        if path.is_file():
            version, cuda = banner_version(path)
            return FoundLibrary(path=str(path), found_via=found_via, version=version, cuda=cuda)
    return None
