"""The engines: what measures a sweep. An engine is a rank program that joins its job, times every
collective at every size of one sweep and writes the rows (rank 0 streams ``result.jsonl`` and writes
``result.json``); or, for nccl-tests, the driver of NVIDIA's own binaries, whose output is read back as the
same rows. Three exist, one per ``--engine``:

* ``engines.nccl``: the default on GPUs. NCCL called through nccl4py, CUDA through cuda-bindings, no torch
  in the rank (``python -m gpufabric.engines.nccl.rank``).
* ``engines.torch``: torch.distributed (gloo on CPU, other backends, NCCL through torch)
  (``python -m gpufabric.engines.torch.rank``).
* ``engines.nccl_tests``: nccl-tests' ``*_perf`` binaries, their command lines and the check of their
  output against the command.

What every engine shares is the harness in ``gpufabric.bench``: the config, nccl-tests' size semantics,
the stopping rules, rows, stages and faults, the rank identity and exit protocol, the run directory, and
the runner that prepares and executes a sweep. The modes (bench, nccl-tests, A/B, tune) are
``gpufabric.jobs``.

Importing this package imports nothing: a rank program imports it first and must start fast, so its
names (the nccl-tests driver's bring the launchers' plan types) load on first use (``gpufabric._lazy``).
The rank programs' registry is ``bench.rank_engines``, below the engines, re-exported here.
"""

from typing import TYPE_CHECKING

from gpufabric._lazy import lazy_package
from gpufabric.boundary_names import NCCL_LIB_ENV as NCCL_LIB_ENV  # its public name here too

if TYPE_CHECKING:
    from gpufabric.bench.rank_engines import (
        CPU_RANKS_PER_CORE,
        DEFAULT_CPU_RANKS,
        RANK_MODULES,
        RankEngine,
        rank_module,
        usable_cores,
    )
    from gpufabric.engines.nccl_tests import (
        NcclTestsSettings,
        binary_supports_json,
        locate_binary,
        nccl_tests_program,
        planned_binary,
        run_nccl_tests,
    )
lazy_package(__name__)

__all__ = [
    "CPU_RANKS_PER_CORE",
    "DEFAULT_CPU_RANKS",
    "NCCL_LIB_ENV",
    "RANK_MODULES",
    "NcclTestsSettings",
    "RankEngine",
    "binary_supports_json",
    "locate_binary",
    "nccl_tests_program",
    "planned_binary",
    "rank_module",
    "run_nccl_tests",
    "usable_cores",
]
