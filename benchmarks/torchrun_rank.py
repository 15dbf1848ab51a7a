"""One rank of a job torchrun started (``python3 -m torch.distributed.run --nproc_per_node N SCRIPT``), for
the benchmark scripts run that way (train_reference.py, train_profile.py): joining the job's process group
and leaving it, the same way in both, so their numbers differ only by what they run in between.

Joining reads torchrun's environment: ``LOCAL_RANK`` picks the GPU, and ``init_process_group`` reads
RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT itself. On a GPU host the group is NCCL's; without a GPU
(a CPU smoke test) it is gloo's, so the same loop runs anywhere. Leaving skips the group's teardown once
every rank's lines are out: a DDP job on gloo can hang or abort in it (pytorch/pytorch#190489, the reason
gpufabric's ranks leave the same way).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import NoReturn

import torch
import torch.distributed as dist


@dataclass(frozen=True)
class TorchrunRank:
    """This process's place in the job: its device (its GPU, or the CPU) and the job's size."""

    local_rank: int
    device: torch.device
    on_gpu: bool
    world_size: int


def join_torchrun_job() -> TorchrunRank:
    """Set this rank's GPU and join the job's process group (NCCL on a GPU, gloo without one)."""
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    on_gpu = torch.cuda.is_available()
    if on_gpu:
        torch.cuda.set_device(local_rank)
        device = torch.device("cuda", local_rank)
        dist.init_process_group("nccl", device_id=device)
    else:
        device = torch.device("cpu")
        dist.init_process_group("gloo")
    return TorchrunRank(local_rank, device, on_gpu, dist.get_world_size())


def leave_without_teardown() -> NoReturn:
    """Wait for every rank, then exit 0 with this rank's output flushed and the process group left as is."""
    dist.barrier()
    sys.stdout.flush()
    os._exit(0)
