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

__version__ = "0.1.0"

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
