"""What this install can do (``gpufabric env``): engines, clients and programs, found without importing them.

Public API:
    ``probe_environment(environ) -> EnvironmentReport``  every ``Capability``: installed or not, version,
        what it enables, the extra or package that adds it (``probe.py``).
    ``find_libnccl(environ) -> FoundLibrary | None``  the ``libnccl.so.2`` the NCCL engine would load, in
        cuda-pathfinder's search order, with the version from its banner (``libnccl.py``).
The extras and ``require`` (the one-line error of a command whose extra is missing) are in
``gpufabric._optional``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpufabric._lazy import lazy_package

if TYPE_CHECKING:  # the public names, each imported on first use (gpufabric._lazy)
    from gpufabric.capabilities.libnccl import FoundLibrary, find_libnccl
    from gpufabric.capabilities.probe import Capability, EnvironmentReport, probe_environment
lazy_package(__name__)

__all__ = ["Capability", "EnvironmentReport", "FoundLibrary", "find_libnccl", "probe_environment"]
