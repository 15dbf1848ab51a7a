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

Importing this package imports nothing: a rank program imports it first and must start fast, so the
nccl-tests driver's names (which bring the launchers' plan types) load on first use.
"""

from typing import TYPE_CHECKING, Literal

from gpufabric._lazy import lazy_package

if TYPE_CHECKING:
    from gpufabric.engines.nccl_tests import (
        NcclTestsSettings,
        binary_supports_json,
        locate_binary,
        nccl_tests_program,
        planned_binary,
        run_nccl_tests,
    )
lazy_package(__name__)

NCCL_LIB_ENV = "GPUFABRIC_NCCL_LIB"
"""The libnccl ``bench --nccl-lib`` names, as the direct engine's ranks (``engines.nccl.library``) and the
install check (``capabilities.libnccl``) read it."""

RankEngine = Literal["nccl", "torch"]
"""The engines that are a rank program of ours (nccl-tests runs NVIDIA's binaries instead)."""

RANK_MODULES: dict[RankEngine, str] = {
    "nccl": "gpufabric.engines.nccl.rank",
    "torch": "gpufabric.engines.torch.rank",
}
"""The module each rank runs (``python -m <module> --config <run_dir>/config.json``), per engine."""


def rank_module(engine: str) -> str:
    """The rank program of a resolved engine: the NCCL engine's for ``nccl``, else torch.distributed's."""
    return RANK_MODULES["nccl"] if engine == "nccl" else RANK_MODULES["torch"]


__all__ = [
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
]
