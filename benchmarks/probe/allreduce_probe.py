"""Probe: a tiny torch.distributed all_reduce per GPU, to capture real NCCL INFO logs (torchrun launches it).

Used once per GPU machine to record NCCL's own debug output as test fixtures (tests/fixtures/nccl_logs/):
    NCCL_DEBUG=INFO NCCL_DEBUG_FILE=out/nccl.%h.%p.log \
        torchrun --nproc_per_node=4 benchmarks/probe/allreduce_probe.py
"""

import os
import time

import torch
import torch.distributed as dist

dist.init_process_group("nccl")
rank = dist.get_rank()
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
for nbytes in (1 << 10, 1 << 20, 64 << 20):
    x = torch.ones(nbytes // 4, device="cuda")
    for _ in range(3):
        dist.all_reduce(x)
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(10):
        dist.all_reduce(x)
    torch.cuda.synchronize()
    seconds = (time.perf_counter() - start) / 10
    if rank == 0:
        world = dist.get_world_size()
        busbw = nbytes / seconds / 1e9 * 2 * (world - 1) / world
        print(f"size={nbytes} time_us={seconds * 1e6:.1f} busbw={busbw:.2f} ok={x[0].item()}")
dist.destroy_process_group()
