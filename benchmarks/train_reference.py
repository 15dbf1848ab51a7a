"""A well-known training loop to set train-bench's scaling efficiency beside (issue 37).

torchtitan is not installed on the lent GPU machine and it reaches no network, so this file is the
reference: the plainest loop written as torchtitan's own documentation and code apply FSDP2 and as
PyTorch's DDP tutorial applies DDP, nothing of gpufabric's harness in it (no twin, no phases, no probe):

- FSDP2 as torchtitan's docs/fsdp.md shows ("for module in model.modules(): if isinstance(module,
  TransformerBlock): fully_shard(module); fully_shard(model)") with the settings of torchtitan's
  ``apply_fsdp_to_decoder`` (torchtitan/distributed/fsdp.py, pytorch/torchtitan@b5bcd76): the tied
  embedding, final norm and head as one unit not resharded after forward, every block resharded
  (the "default" policy without pipeline parallelism), then the root;
  ``MixedPrecisionPolicy(param_dtype=bf16, reduce_dtype=fp32)`` (torchtitan's defaults), implicit
  prefetch only (torchtitan sets explicit prefetch only with expert parallelism).
- DDP with its defaults (25 MB buckets), the model in bf16, as train-bench's DDP.

The model is train-bench's (``gpufabric.train.transformer``) so both loops train the same network on
the same synthetic tokens, by default train-bench's GPU default; warm-up and timed steps default to
train-bench's (``TRAIN_DEFAULTS``). Timing is torchtitan's own: wall time of the logged steps after a
warm-up, with the device synchronised at both ends. Run with torchrun (``python3 -m
torch.distributed.run --nproc_per_node N benchmarks/train_reference.py --strategy fsdp``); rank 0 prints
one JSON line. Nothing here sets threads: torchrun sets ``OMP_NUM_THREADS=1`` when ``--nproc_per_node``
is over 1 (``torch/distributed/run.py``) and leaves a one-process job at torch's default (one intra-op
thread per core), so a one-GPU job compared with an N-GPU one is started with ``OMP_NUM_THREADS=1`` by
the caller (benchmarks/scenarios/gpu_train.sh). The line says what the job ran with (``threads``) and
the process's CPU time per timed step (``cpu_ms_per_step``, rank 0, every thread of the process), so a
one-GPU step slowed by its thread pool shows as CPU time, not only as wall time.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
from torch.nn.parallel import DistributedDataParallel

from gpufabric.options.train import TRAIN_DEFAULTS
from gpufabric.train.model_shape import GPU_DEFAULT_MODEL, MODEL_PRESETS, PRESET_BATCH
from gpufabric.train.transformer import Block, build_model, lm_loss, synthetic_batches

sys.path.insert(0, str(Path(__file__).parent))
from torchrun_rank import join_torchrun_job, leave_without_teardown  # shared with train_profile.py


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--strategy", choices=("ddp", "fsdp"), default="fsdp")
    parser.add_argument("--model", default=GPU_DEFAULT_MODEL, choices=list(MODEL_PRESETS))
    parser.add_argument("--batch-size", type=int, default=None)
    parser.add_argument("--steps", type=int, default=TRAIN_DEFAULTS.steps)
    parser.add_argument("--warmup", type=int, default=TRAIN_DEFAULTS.warmup_steps)
    args = parser.parse_args()
    job = join_torchrun_job()
    local_rank, device, on_gpu, world = job.local_rank, job.device, job.on_gpu, job.world_size
    low = torch.bfloat16 if on_gpu else torch.float32  # without a GPU (a CPU smoke test): gloo, fp32
    spec = MODEL_PRESETS[args.model]
    batch = args.batch_size or PRESET_BATCH[args.model]
    if args.strategy == "fsdp":
        model = build_model(spec, seed=0, device=device, dtype=torch.float32)
        mesh = init_device_mesh(device.type, (world,))
        mp_policy = MixedPrecisionPolicy(param_dtype=low, reduce_dtype=torch.float32)
        fully_shard([model.tokens, model.positions, model.norm, model.head], mesh=mesh, mp_policy=mp_policy,
                    reshard_after_forward=False)  # fmt: skip
        for module in model.modules():
            if isinstance(module, Block):
                fully_shard(module, mesh=mesh, mp_policy=mp_policy, reshard_after_forward=True)
        fully_shard(model, mesh=mesh, mp_policy=mp_policy)
        trained: torch.nn.Module = model
    else:
        model = build_model(spec, seed=0, device=device, dtype=low)
        trained = DistributedDataParallel(model, device_ids=[local_rank] if on_gpu else None)
    optimizer = torch.optim.AdamW(trained.parameters(), lr=1e-4)
    batches = synthetic_batches(spec, batch, rank=dist.get_rank(), seed=0, device=device)

    def step(i: int) -> None:
        loss = lm_loss(trained, batches[i % len(batches)])
        loss.backward()  # type: ignore[no-untyped-call]
        optimizer.step()
        optimizer.zero_grad()

    def sync() -> None:
        if on_gpu:
            torch.cuda.synchronize()

    for i in range(args.warmup):
        step(i)
    sync()
    dist.barrier()
    start, cpu_start = time.perf_counter(), time.process_time()
    for i in range(args.steps):
        step(i)
    sync()
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    times = [0.0] * world
    dist.all_gather_object(times, elapsed)
    slowest = max(times)
    if dist.get_rank() == 0:
        tokens = batch * spec.seq_len * world * args.steps
        print(json.dumps({
            "loop": "reference", "strategy": args.strategy, "model": args.model, "world_size": world,
            "batch_size": batch, "step_ms": 1e3 * slowest / args.steps, "tokens_per_s": tokens / slowest,
            "threads": torch.get_num_threads(), "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
            "cpu_ms_per_step": 1e3 * cpu / args.steps, "steps": args.steps, "warmup": args.warmup,
        }), flush=True)  # fmt: skip
    leave_without_teardown()  # after its line is out, without the group's teardown (torchrun_rank says why)


if __name__ == "__main__":
    main()
