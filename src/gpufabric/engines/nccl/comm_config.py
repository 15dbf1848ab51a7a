"""The communicator the direct engine times on: made with the settings nccl-tests gives its own.

nccl-tests 2.19 makes every communicator with ``ncclCommInitRankConfig`` (``initComms`` in its
``common.cu``) and, built against NCCL 2.28 or later, sets ``nvlinkCentricSched = 1`` in that config;
its ``sendrecv_perf`` also limits the communicator to 2 point-to-point peers (``maxP2pPeers``) on NCCL
2.30 or later (``SendRecvInitCommConfig`` in ``sendrecv.cu``). ``nvlinkCentricSched`` reaches the GPU
only as a kernel launch attribute (``CU_LAUNCH_ATTRIBUTE_NVLINK_UTIL_CENTRIC_SCHEDULING``, set by NCCL's
``enqueue.cc`` on compute capability 10.0 and later with a CUDA 13 driver, unless
``NCCL_NVLINK_UTIL_CENTRIC_SCHED_ENABLE`` overrides it): on Blackwell it changes how the GPU schedules
NCCL's NVLink traffic, on H100/H200 nothing, so the alltoall agreement that improved on 4x H200 in the
call after this change (docs/benchmarks.md §14) was the runs moving, not this setting. ``maxP2pPeers``
bounds how many point-to-point peers the communicator connects. The engine makes its communicator the
same way; the one setting a single communicator for several collectives cannot share with nccl-tests
(sendrecv's peer limit would refuse alltoall) is said in the run's notes instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

NVLINK_CENTRIC_SINCE = 22800
"""NCCL 2.28.0: nccl-tests sets ``nvlinkCentricSched`` from this release on."""
MAX_P2P_PEERS_SINCE = 23000
"""NCCL 2.30.0: nccl-tests' sendrecv sets ``maxP2pPeers = 2`` from this release on."""
SENDRECV_PEERS = 2
"""sendrecv's ring: each rank sends to the next rank and receives from the previous one."""


@dataclass(frozen=True)
class CommSettings:
    """nccl4py ``Config`` fields to set (attribute -> value), and what could not match nccl-tests."""

    fields: Mapping[str, int] = field(default_factory=dict)
    note: str | None = None

    def describe(self) -> str:
        """One line for the run's notes: what the communicator was made with."""
        if not self.fields:
            return "communicator: NCCL's default config (as nccl-tests built against this NCCL makes its own)"
        made = ", ".join(f"{name}={value}" for name, value in self.fields.items())
        return (
            f"communicator: {made} requested (as nccl-tests 2.19 built against this NCCL makes its own; an "
            "NCCL_* variable that overrides a config field applies to both tools)"
        )


def nccl_tests_settings(version_code: int, collectives: Sequence[str]) -> CommSettings:
    """The settings nccl-tests would give the communicator of these collectives, built against this NCCL
    (nccl-tests gates on the headers it was compiled with; the loaded library's version stands for them)."""
    fields: dict[str, int] = {}
    note = None
    if version_code >= NVLINK_CENTRIC_SINCE:
        fields["nvlink_centric_sched"] = 1
    if version_code >= MAX_P2P_PEERS_SINCE and "sendrecv" in collectives:
        if set(collectives) == {"sendrecv"}:
            fields["max_p2p_peers"] = SENDRECV_PEERS
        else:
            note = (
                "sendrecv: timed on the communicator of all this run's collectives; nccl-tests' "
                f"sendrecv_perf limits its own to {SENDRECV_PEERS} point-to-point peers on NCCL 2.30+ "
                "(maxP2pPeers), which the others cannot run on: measure -c sendrecv alone to compare "
                "it with sendrecv_perf"
            )
    return CommSettings(fields, note)


def init_communicator(nccl: Any, nranks: int, unique_id: Any, rank: int, settings: CommSettings) -> Any:
    """``ncclCommInitRankConfig`` with ``settings`` through nccl4py's bindings (``ncclCommInitRank`` when
    there is nothing to set, as on NCCL releases before 2.28)."""
    if not settings.fields:
        return nccl.comm_init_rank(nranks, unique_id, rank)
    config = nccl.Config()  # NCCL_CONFIG_INITIALIZER: every other field left to NCCL
    for name, value in settings.fields.items():
        setattr(config, name, value)
    # config is kept alive by this frame while NCCL reads it (init is synchronous: blocking communicator)
    return nccl.comm_init_rank_config(nranks, unique_id, rank, config.ptr)
