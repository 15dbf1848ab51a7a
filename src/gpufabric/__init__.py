"""gpufabric: turn on, prove and measure the fastest GPU interconnect a cluster has.

This module exports only the error types (``gpufabric.errors``) and ``__version__``. Each package names
its public API in its ``__init__``'s ``__all__`` (``gpufabric.jobs.prepare_bench``,
``gpufabric.bench.BenchConfig``, ``gpufabric.results.read_result``, ``gpufabric.report.render_document``,
...). The CLI imports only those names (``tests/cli/test_public_names.py`` checks every CLI module).
Data flows one way: catalog -> planner -> launch -> bench/engines -> results -> nccl_logs -> analysis ->
jobs -> cli (which renders through report). ``docs/DESIGN.md`` draws the packages and the path of one size.
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
