"""Where and through what a sweep's ranks measure, the third part of ``BenchConfig``: the engine (the rank
program), the torch.distributed backend, the device, and NCCL virtual nodes (with MPS) on one host."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from gpufabric.errors import UsageError
from gpufabric.options import BENCH_DEFAULTS
from gpufabric.options.train import Device

Engine = Literal["auto", "nccl", "torch"]
"""Which rank program measures: ``nccl`` (NCCL through nccl4py, no torch: the default on GPUs when the
``gpu`` extra is installed), ``torch`` (torch.distributed: gloo on CPU, other backends, or NCCL through
torch), ``auto`` (nccl on GPUs with nccl4py installed, else torch)."""
Backend = str  # any torch.distributed backend name: nccl, gloo, hccl, mpi, xccl, ...
# torch.distributed's built-in backends (Backend.backend_list in torch 2.13, less 'undefined' and 'fake')
# plus Habana's hccl, which its plugin registers on Gaudi hosts (seed 004). A name outside this list
# would only fail inside every rank, as an AssertionError from init_process_group.
KNOWN_BACKENDS: tuple[str, ...] = ("nccl", "gloo", "mpi", "ucc", "xccl", "hccl")


class PlacementSettings(BaseModel):
    """The rank program and what it runs on; ``None``/``auto``: chosen from this host's GPUs."""

    model_config = ConfigDict(extra="forbid")

    engine: Engine = "auto"
    virtual_nodes: int = Field(
        default=BENCH_DEFAULTS.virtual_nodes,
        ge=0,
        description="local launcher: split the ranks into this many NCCL virtual nodes (NCCL_HOSTID per "
        "node); ranks may share a GPU. 0: off",
    )
    mps: bool = Field(
        default=BENCH_DEFAULTS.mps, description="local launcher: a private MPS daemon for the job"
    )
    backend: str | None = BENCH_DEFAULTS.backend
    device: Device = "auto"

    @field_validator("backend")
    @classmethod
    def _backend(cls, value: str | None) -> str | None:
        return normalize_backend(value)


def normalize_backend(value: str | None) -> str | None:
    """``--backend``: lower-cased (``NCCL`` means nccl), and one of ``KNOWN_BACKENDS``; None stays None."""
    if value is None:
        return None
    name = value.strip().lower()
    if name not in KNOWN_BACKENDS:
        raise UsageError(
            f"--backend: unknown torch.distributed backend {value!r}; choose from "
            f"{', '.join(KNOWN_BACKENDS)} (or drop --backend: nccl on GPUs, else gloo)"
        )
    return name
