"""``RunConditions``: how a collective is run, apart from the node's hardware and the node count: ranks per
node, physical hosts, the transport forced, the algorithm, NVLS and CollNet, NCCL's socket threads and the
process layout. ``situation.assess`` and ``model.expect`` take it as one object (``expect`` also takes its
fields as keywords, checked by this model), so the list of what shapes an expectation is written once.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from gpufabric.expect.regimes import Regime

Transport = Literal["auto", "net", "socket"]


class RunConditions(BaseModel):
    """Everything about a run that changes its expectation besides the shape and the node count."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    ranks_per_node: int | None = Field(default=None, ge=1, description="None: the shape's GPUs per node")
    hosts: int | None = Field(
        default=None, ge=1, description="physical hosts; 1 with nodes > 1 is virtual nodes (NCCL_HOSTID)"
    )
    transport: Transport = Field(
        default="auto", description="socket: NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 on one host"
    )
    regime: Regime | None = Field(default=None, description="the algorithm forced (NCCL_ALGO); None: rule")
    nvls: bool | None = Field(default=None, description="NVLink SHARP available; None: not known")
    collnet: bool = False
    socket_threads: int | None = Field(default=None, ge=0, description="NCCL_SOCKET_NTHREADS")
    socks_per_thread: int | None = Field(default=None, ge=1, description="NCCL_NSOCKS_PERTHREAD")
    ranks_per_process: int | None = Field(
        default=None, ge=1, description="1: mpirun -np N -g 1; N: nccl-tests -g N (one host's sockets)"
    )

    def updated(self, **fields: Any) -> RunConditions:
        """A copy with ``fields`` replaced, each checked as at construction (an unknown name is refused)."""
        return RunConditions.model_validate({**self.model_dump(exclude_unset=True), **fields})
