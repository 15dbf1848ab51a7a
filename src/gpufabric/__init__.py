"""gpufabric: turn on, prove and measure the fastest GPU interconnect a cluster has.

This module exports only the error types (``gpufabric.errors``) and ``__version__``. Each package names
its own entry points in its ``__init__`` (``gpufabric.bench.run_bench``, ``gpufabric.results.read_result``,
``gpufabric.catalog.get_instance``, ...); there is no curated public API, and the CLI
(``gpufabric.cli``) imports the packages' modules directly, not only those names.
Data flows one way: catalog -> planner -> launch -> bench -> results -> analysis -> report.
"""

from typing import TYPE_CHECKING

from gpufabric.errors import (
    BenchTimeout,
    CatalogError,
    CheckFailed,
    GpufabricError,
    InputError,
    LaunchError,
    RankFailure,
    UsageError,
)


def _installed_version() -> str:
    """The version pip installed (pyproject.toml's); a bare source tree on PYTHONPATH says so."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("gpufabric")
    except PackageNotFoundError:
        return "0+source"


if TYPE_CHECKING:
    __version__: str


def __getattr__(name: str) -> str:
    # Looked up on first use: importlib.metadata costs a rank process ~0.1-0.4 s of start-up.
    if name == "__version__":
        global __version__
        __version__ = _installed_version()
        return __version__
    raise AttributeError(f"module 'gpufabric' has no attribute {name!r}")


__all__ = [
    "BenchTimeout",
    "CatalogError",
    "CheckFailed",
    "GpufabricError",
    "InputError",
    "LaunchError",
    "RankFailure",
    "UsageError",
    "__version__",
]
