"""Where a train-bench step's time goes, synced against its twin: torch.profiler over a few steps of each.

Issue 37 left exposed communication on NVLink that neither busbw nor the contention probe explains
(2026-11-27, 4x H200: 4.6 ms of DDP's 7.7 ms, 31 ms of FSDP's 37 ms). This builds the model, the synced
wrapper and its twin exactly as train-bench's ranks do (``gpufabric.train.strategy.wrap``), warms both
up, then profiles ``--steps`` synced steps and as many twin steps (CPU and CUDA activity, one
synchronisation after each step). Rank 0 prints, per side: the host's issue time and the device's time
per step, the busy time of the device's kernels (their union: how long the GPU really worked), and the
ops with the most self CPU time and the kernels with the most device time, so a miss can be read as host
work, device work or waiting. Run with torchrun:

    python3 -m torch.distributed.run --standalone --nproc_per_node 4 benchmarks/train_profile.py \
        --strategy fsdp
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
from torch.profiler import ProfilerActivity, profile

from gpufabric.train.config import TrainConfig
from gpufabric.train.model_shape import GPU_DEFAULT_MODEL, MODEL_PRESETS, PRESET_BATCH
from gpufabric.train.strategy import wrap
from gpufabric.train.transformer import synthetic_batches

sys.path.insert(0, str(Path(__file__).parent))
from torchrun_rank import join_torchrun_job, leave_without_teardown  # shared with train_reference.py


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--strategy", choices=("ddp", "fsdp"), default="fsdp")
    parser.add_argument("--model", default=GPU_DEFAULT_MODEL, choices=list(MODEL_PRESETS))
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--top", type=int, default=12)
    parser.add_argument(
        "--kernels-only",
        action="store_true",
        help="trace only the device's kernels: the host's op tracing slows the issue of a host-paced step, "
        "so the traced step is not the step (docs/benchmarks.md 3b, 2026-11-28)",
    )
    args = parser.parse_args()
    job = join_torchrun_job()
    device, on_gpu, world = job.device, job.on_gpu, job.world_size
    config = TrainConfig(
        model_name=args.model,
        model=MODEL_PRESETS[args.model],
        strategy=args.strategy,
        batch_size=PRESET_BATCH[args.model],
    )
    parallel = wrap(config, device, on_gpu, world)
    batches = synthetic_batches(config.model, config.batch_size, rank=dist.get_rank(), seed=0, device=device)
    sides = (("synced", parallel.synced), ("twin", parallel.compute_only))
    barrier_group = dist.new_group(backend="gloo")  # an NCCL barrier's kernel would count as NCCL busy

    def settle() -> None:
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        dist.barrier(group=barrier_group)

    for i in range(3):
        for _, trainer in sides:
            trainer.step(batches[i % len(batches)])
    lines = []
    for name, trainer in sides:
        side_lines, overlap = _profiled(name, trainer, batches, args, device, settle)
        every_rank: list[Any] = [None] * world
        dist.all_gather_object(every_rank, overlap)
        lines += side_lines + [f"{name} overlap rank {r}: {o}" for r, o in enumerate(every_rank)]
    if dist.get_rank() == 0:
        print(
            f"# {args.strategy} {args.model} x{world}, batch {config.batch_size}, {args.steps} steps a side"
        )
        print("\n".join(lines), flush=True)
    leave_without_teardown()  # as the reference loop leaves: no teardown race after the lines are out


def _profiled(
    name: str,
    trainer: Any,
    batches: Any,
    args: argparse.Namespace,
    device: torch.device,
    settle: Callable[[], None],
) -> tuple[list[str], str]:
    """``args.steps`` steps of one side under the profiler, each between two ``settle()`` (the device idle,
    the ranks together); its lines and this rank's overlap line."""
    steps, top = args.steps, args.top
    on_gpu = device.type == "cuda"
    activities = [] if on_gpu and args.kernels_only else [ProfilerActivity.CPU]
    activities += [ProfilerActivity.CUDA] if on_gpu else []
    cuda: Any = torch.cuda  # Event's constructor is untyped
    host, on_device = [], []
    with profile(activities=activities) as prof:
        for i in range(steps):
            settle()
            begin = time.perf_counter()
            start = cuda.Event(enable_timing=True) if on_gpu else None
            end = cuda.Event(enable_timing=True) if on_gpu else None
            if start is not None:
                start.record()
            trainer.step(batches[i % len(batches)])
            host.append((time.perf_counter() - begin) * 1e3)
            if end is not None:
                end.record()
            settle()
            on_device.append(float(start.elapsed_time(end)) if start is not None else host[-1])
    events = prof.key_averages()
    lines = [
        f"{name}: per step host issue {sum(host) / steps:.2f} ms, device {sum(on_device) / steps:.2f} ms, "
        f"kernels busy {_busy_ms(prof) / steps:.2f} ms, of them not NCCL's "
        f"{_busy_ms(prof, skip_nccl=True) / steps:.2f} ms (unions of kernel intervals)"
    ]
    by_cpu = sorted(events, key=lambda e: e.self_cpu_time_total, reverse=True)[:top]
    lines += [_op_line(name, "cpu", e.self_cpu_time_total, e, steps) for e in by_cpu]
    if on_gpu:
        by_device = sorted(events, key=lambda e: _device_us(e), reverse=True)[:top]
        lines += [_op_line(name, "gpu", _device_us(e), e, steps) for e in by_device]
    return lines, _overlap_line(prof, steps)


def _overlap_line(prof: Any, steps: int) -> str:
    """Per step on this rank: how long compute kernels and NCCL's ran, and how long both at once. Beside
    the twin's compute busy time this says what the collectives cost the compute inside the real step, and
    the NCCL kernels' busy time says how long the collectives really ran beside it (the contention
    probe's two rates, read off the step itself instead of a probe)."""
    every = _busy_ms(prof)
    compute = _busy_ms(prof, skip_nccl=True)
    nccl = _busy_ms(prof, only_nccl=True)
    both = compute + nccl - every
    kernels = sum(
        e.time_range.elapsed_us()
        for e in prof.events()
        if str(getattr(e, "device_type", "")).endswith("CUDA") and "nccl" not in e.name.lower()
    )
    return (
        f"compute busy {compute / steps:.2f} ms, NCCL busy {nccl / steps:.2f} ms, both at once "
        f"{both / steps:.2f} ms, compute kernels' summed time {kernels / 1e3 / steps:.2f} ms"
    )


def _op_line(side: str, where: str, self_us: float, event: Any, steps: int) -> str:
    per_step = self_us / 1e3 / steps
    return f"  {side} {where}  {per_step:8.3f} ms/step  x{event.count // steps:<5d} {event.key[:80]}"


def _device_us(event: Any) -> float:
    """Self device time of an op or kernel, us (``self_cuda_time_total`` in older torch)."""
    return float(getattr(event, "self_device_time_total", getattr(event, "self_cuda_time_total", 0.0)))


def _busy_ms(prof: Any, *, skip_nccl: bool = False, only_nccl: bool = False) -> float:
    """The union of the device kernels' intervals: time the GPU was running at least one kernel, ms.
    NCCL's kernels spin while they wait for peers, so without them it is the compute's busy time."""
    spans = []
    for event in prof.events():
        kind = str(getattr(event, "device_type", ""))
        is_nccl = "nccl" in event.name.lower()
        if (skip_nccl and is_nccl) or (only_nccl and not is_nccl):
            continue
        if kind.endswith("CUDA") and event.time_range.elapsed_us() > 0:
            spans.append((event.time_range.start, event.time_range.end))
    busy, reach = 0.0, None
    for start, end in sorted(spans):
        if reach is None or start > reach:
            busy += end - start
            reach = end
        elif end > reach:
            busy += end - reach
            reach = end
    return busy / 1e3


if __name__ == "__main__":
    main()
