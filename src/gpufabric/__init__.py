"""gpufabric: turn on, prove and measure the fastest GPU interconnect a cluster has.

The public API is re-exported here; the CLI (``gpufabric.cli``) calls only this surface.
Data flows one way: catalog -> planner -> launch -> bench -> results -> analysis -> report.
"""

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


__version__ = _installed_version()

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
