"""The direct engine's rank joining its job and leaving it: the TCP side channel made at rendezvous
(``control``), NCCL's communicator made over it with nccl-tests' settings (``comm_config``), and the
communicator's teardown.

Kept apart from the rank program (``engines.nccl.rank``), which decides what runs between joining and
leaving: the stages it reports around these two steps (``rendezvous``, ``init``) are the ones the parent's
watchdog names when a rank never arrives.
"""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

from gpufabric.bench.config import BenchConfig
from gpufabric.bench.identity import RankIdentity
from gpufabric.bench.stages import StageReporter
from gpufabric.engines.nccl import library
from gpufabric.engines.nccl.comm_config import CommSettings, init_communicator
from gpufabric.engines.nccl.control import ControlPlane
from gpufabric.errors import GpufabricError

__all__ = ["destroy_communicator", "join_job"]


def join_job(
    config: BenchConfig, identity: RankIdentity, stages: StageReporter, settings: CommSettings
) -> tuple[Any, Any, Any]:
    """Rendezvous over TCP, then NCCL's communicator made as nccl-tests makes its own: (control, nccl
    bindings, communicator)."""
    stages.enter("rendezvous")
    control = ControlPlane(
        identity.rank, identity.world_size, identity.master_addr, identity.master_port, config.init_timeout_s
    )
    stages.enter("init")
    nccl = library.bindings()
    # ncclUniqueId is 128 opaque bytes: rank 0 makes it, the control channel carries it as hex.
    made = None
    if identity.rank == 0:
        unique = nccl.get_unique_id()  # kept alive while its bytes are read (.ptr points into it)
        made = ctypes.string_at(unique.ptr, 128).hex()
    shared = bytes.fromhex(control.broadcast(made))
    uid = nccl.UniqueId.from_data(np.frombuffer(shared, dtype=np.int8).view(nccl.unique_id_dtype).copy())
    try:
        comm = init_communicator(nccl, identity.world_size, uid, identity.rank, settings)
    except nccl.NCCLError as exc:
        raise GpufabricError(f"NCCL communicator init failed on rank {identity.rank}: {exc}") from exc
    return control, nccl, comm


def destroy_communicator(nccl: Any, comm: Any) -> None:
    """Finalize and destroy ``comm``; abort it when that fails."""
    try:
        nccl.comm_finalize(comm)
        nccl.comm_destroy(comm)
    except Exception:  # teardown of a failed job: the process exits next anyway
        nccl.comm_abort(comm)
