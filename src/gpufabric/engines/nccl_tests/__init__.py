"""nccl-tests as an engine: NVIDIA's ``*_perf`` binaries, driven and read back as our rows.

* ``driver``: find the binaries, build the seeds' command lines, run them through any launcher and read
  rank 0's table (or ``-J`` JSON) with the result readers.
* ``output_check``: does the printed table describe the job that was launched (ranks, collective, type,
  reduction, root, sizes)? A binary built without ``MPI=1`` under mpirun is caught here.

The mode that plans, runs, merges and attests nccl-tests sweeps is ``gpufabric.jobs.nccl_tests``.
"""

from typing import TYPE_CHECKING

from gpufabric._lazy import lazy_package

# Loaded on first use (gpufabric._lazy): a bench on our own engine reads only NcclTestsSettings, and the
# output check brings every result reader.
if TYPE_CHECKING:
    from gpufabric.engines.nccl_tests.driver import (
        NcclTestsRun,
        NcclTestsSettings,
        RankZeroLog,
        binary_supports_json,
        locate_binary,
        nccl_tests_program,
        planned_binary,
        run_nccl_tests,
    )
    from gpufabric.engines.nccl_tests.output_check import MPI_HINT, Expectation, mismatch
lazy_package(__name__)

__all__ = [
    "MPI_HINT",
    "Expectation",
    "NcclTestsRun",
    "NcclTestsSettings",
    "RankZeroLog",
    "binary_supports_json",
    "locate_binary",
    "mismatch",
    "nccl_tests_program",
    "planned_binary",
    "run_nccl_tests",
]
