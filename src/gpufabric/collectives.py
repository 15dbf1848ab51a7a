"""The collectives' names: the one list every layer (catalog, engines, readers, results) takes them from.

nccl-tests names each binary ``<collective>_perf``; these are its names without ``_perf``. A leaf module
with no imports, so the bottom layer (the catalog) can use it as well as the engines above it.
"""

from __future__ import annotations

from typing import Literal, get_args

EngineCollective = Literal[
    "all_reduce",
    "all_gather",
    "reduce_scatter",
    "alltoall",
    "broadcast",
    "reduce",
    "sendrecv",
]
"""What every engine measures (the torch engine has no gather, scatter or alltoallv with nccl-tests'
layouts)."""
DirectOnlyCollective = Literal["gather", "scatter", "alltoallv"]
"""nccl-tests 2.19's other binaries, measured by the direct NCCL engine (and nccl-tests itself) only."""
CollectiveName = Literal[EngineCollective, DirectOnlyCollective]
NcclTestsProgram = Literal[CollectiveName, "hypercube"]
"""Every ``*_perf`` program of nccl-tests: the collectives, and hypercube (a test pattern, no engine)."""

COLLECTIVES: tuple[EngineCollective, ...] = get_args(EngineCollective)
"""What ``-c all`` runs, in nccl-tests' order."""
DIRECT_ONLY: tuple[DirectOnlyCollective, ...] = get_args(DirectOnlyCollective)
ALL_COLLECTIVES: tuple[CollectiveName, ...] = COLLECTIVES + DIRECT_ONLY
NCCL_TESTS_PROGRAMS: tuple[NcclTestsProgram, ...] = get_args(NcclTestsProgram)
