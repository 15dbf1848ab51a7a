"""Data-parallel wrappers, their communication-free twins, and what each step communicates.

- DDP (``DistributedDataParallel``) exactly as PyTorch's DDP tutorial and benchmarks/train_reference.py
  build it: torch's bucket defaults, no comm hook, so the timed steps pay nothing the reference does not
  (issue 37: a Python comm hook that counted bytes sat in every bucket's path). What a step all-reduces
  is read once, after the timed steps, from DDP's own buckets (``Reducer._get_zeros_like_grad_buckets``,
  the buckets as DDP rebuilt them in the order backward readies them; torch's join hook reads them so).
  The communication-free twin is the same model wrapped the same way over a process group of this rank
  alone: DDP's reducer then does all it does on N ranks (its autograd hooks, the copy of every gradient
  into its bucket, the division by the world size, one all-reduce call per bucket through the process
  group, the copy back) and NCCL/gloo move nothing (a one-rank all-reduce is local). Until 2026-11-27
  the twin was the same wrapped model under ``no_sync()``, which skips the reducer altogether: on 4x H200
  that charged 3.4 ms of the reducer's own work per step to the fabric and made the one-GPU baseline of
  the scaling efficiency lighter than the reference loop's (``torchrun --nproc_per_node 1`` of a DDP
  script runs DDP over one rank: 30.4 ms against our twin's 27.0). On GPUs the model is bf16
  throughout, so buckets are bf16.
- FSDP2 (``torch.distributed.fsdp.fully_shard``) laid out as torchtitan's ``apply_fsdp_to_decoder``:
  fp32 parameters with ``MixedPrecisionPolicy(param_dtype=bf16, reduce_dtype=fp32)`` on GPUs, one unit
  per block resharded after forward, the tied embedding + final norm + head as one unit kept through
  backward, then the root, with FSDP2's implicit prefetch as torchtitan (and the reference loop) use it.
  With ``fsdp_prefetch`` (``--prefetch``) each block also prefetches the next one explicitly
  (``set_modules_to_forward_prefetch`` / ``set_modules_to_backward_prefetch``), so the all-gathers run
  ahead of compute even where the CPU does not (FSDP2's implicit prefetch needs it to).
  The twin is the same model sharded the same way over a mesh of this rank alone: FSDP2 then issues no
  collective (a one-rank group skips them) and keeps its hooks, casts and optimizer on DTensors, so step
  minus twin is communication, not FSDP's bookkeeping. What the twin does not run is the collectives'
  own host path: with one rank FSDP2 copies each parameter directly instead of the copy-in before and
  the copy-out after every all-gather (``_fsdp_param_group.py``: ``world_size == 1``), and that path is
  counted as communication.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import torch.distributed as dist
from torch import nn

from gpufabric.options import TRAIN_DEFAULTS
from gpufabric.train.config import TrainConfig
from gpufabric.train.result import CollectiveCall
from gpufabric.train.schedule import Layout, fsdp_schedule
from gpufabric.train.transformer import TransformerLM, build_model, lm_loss

NCCL_TESTS_DTYPES = {torch.float32: "float", torch.bfloat16: "bfloat16", torch.float16: "half"}
Mark = Callable[[str], None]
"""Called inside a step at ``forward`` (loss computed) and ``backward`` (gradients synced)."""


def dtype_name(dtype: torch.dtype) -> str:
    return NCCL_TESTS_DTYPES.get(dtype, str(dtype).removeprefix("torch."))


def _itemsize(dtype: torch.dtype) -> int:
    return int(torch.empty((), dtype=dtype).element_size())


@dataclass
class Trainer:
    """One model + optimizer + how to run a step: forward, backward, update (the reference loop's step)."""

    model: nn.Module
    optimizer: torch.optim.Optimizer

    def step(self, batch: torch.Tensor, mark: Mark | None = None) -> None:
        loss = lm_loss(self.model, batch)
        if mark is not None:
            mark("forward")
        loss.backward()  # type: ignore[no-untyped-call]
        if mark is not None:
            mark("backward")
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)


def _optimizer(model: nn.Module) -> torch.optim.Optimizer:
    return torch.optim.AdamW(model.parameters(), lr=1e-4)


@dataclass
class DataParallel:
    """The wrapped trainer, its communication-free twin, and the collectives of one synced step."""

    synced: Trainer
    compute_only: Trainer
    compute_method: str
    payload: Callable[[], list[CollectiveCall]]
    alone_group: Any = None
    """The twin's process group: this rank alone (None where no twin runs over one)."""


def wrap(config: TrainConfig, device: torch.device, on_gpu: bool, world_size: int) -> DataParallel:
    if config.strategy == "ddp":
        return _ddp(config, device, torch.bfloat16 if on_gpu else torch.float32)
    return _fsdp(config, device, on_gpu, world_size)


# The flag's default is DDP's own ``bucket_cap_mb`` (25 MB). Passed as such it would also set the first
# bucket to 25 MB; left out, torch keeps its small first bucket (``dist._DEFAULT_FIRST_BUCKET_BYTES``), as
# the reference loop does.


def _ddp(config: TrainConfig, device: torch.device, dtype: torch.dtype) -> DataParallel:
    from torch.nn.parallel import DistributedDataParallel as DDP

    model = build_model(config.model, seed=config.seed, device=device, dtype=dtype)
    layout = Layout.of(config.model)
    ready_of = {id(p): layout.grad_ready(name) for name, p in model.named_parameters()}
    ids = [device.index] if device.type == "cuda" else None
    options: dict[str, Any] = {"device_ids": ids}
    if config.bucket_cap_mb != TRAIN_DEFAULTS.bucket_mb:
        options["bucket_cap_mb"] = config.bucket_cap_mb
    ddp = DDP(model, **options)
    alone = _one_rank_group(dist.get_world_size())
    twin_model = build_model(config.model, seed=config.seed, device=device, dtype=dtype)
    twin = DDP(twin_model, process_group=alone, **options)

    def payload() -> list[CollectiveCall]:
        """One all-reduce per bucket, in DDP's order, ready when backward has finished its last gradient."""
        calls = []
        for grad_bucket in ddp.reducer._get_zeros_like_grad_buckets():
            buffer = grad_bucket.buffer()
            ready = max((ready_of.get(id(p), 1.0) for p in grad_bucket.parameters()), default=1.0)
            size = int(buffer.numel()) * _itemsize(buffer.dtype)
            calls.append(
                CollectiveCall(
                    kind="all_reduce", size_bytes=size, dtype=dtype_name(buffer.dtype), ready_at=ready
                )
            )
        return calls

    return DataParallel(
        synced=Trainer(ddp, _optimizer(ddp)),
        compute_only=Trainer(twin, _optimizer(twin)),
        compute_method="the same model in DDP over a process group of the rank alone: DDP's reducer, bucket "
        "copies and one all-reduce call per bucket as on N ranks, with nothing to exchange",
        payload=payload,
        alone_group=alone,
    )


def _fsdp(config: TrainConfig, device: torch.device, on_gpu: bool, world_size: int) -> DataParallel:
    from torch.distributed.device_mesh import DeviceMesh
    from torch.distributed.fsdp import MixedPrecisionPolicy

    # torchtitan's default: bf16 compute and all-gathers, fp32 gradient reduction and master weights.
    policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32) if on_gpu else None
    gather_dtype, scatter_dtype = (torch.bfloat16, torch.float32) if on_gpu else (torch.float32,) * 2
    model = build_model(config.model, seed=config.seed, device=device, dtype=torch.float32)
    outer = [model.tokens, model.positions, model.norm, model.head]
    per_block = [list(block.parameters()) for block in model.blocks]
    outer_params = list({id(p): p for m in outer for p in m.parameters()}.values())
    _shard(model, None, policy, prefetch=config.fsdp_prefetch)
    alone = _one_rank_group(world_size)
    twin = build_model(config.model, seed=config.seed, device=device, dtype=torch.float32)
    _shard(twin, DeviceMesh.from_group(alone, device.type), policy, prefetch=config.fsdp_prefetch)

    def call(kind: str, params: list[nn.Parameter], dtype: torch.dtype) -> CollectiveCall:
        size = _padded_elements(params, world_size) * _itemsize(dtype)
        return CollectiveCall.model_validate({"kind": kind, "size_bytes": size, "dtype": dtype_name(dtype)})

    def payload() -> list[CollectiveCall]:
        return fsdp_schedule(
            Layout.of(config.model),
            [call("all_gather", p, gather_dtype) for p in per_block],
            [call("reduce_scatter", p, scatter_dtype) for p in per_block],
            call("all_gather", outer_params, gather_dtype),
            call("reduce_scatter", outer_params, scatter_dtype),
        )

    return DataParallel(
        synced=Trainer(model, _optimizer(model)),
        compute_only=Trainer(twin, _optimizer(twin)),
        compute_method="the same FSDP2 model sharded over a mesh of the rank alone (FSDP2 skips every "
        "collective of a one-rank group and keeps its casts and copies); its optimizer updates the whole "
        "model, so exposed communication is read at the end of backward, before the optimizer",
        payload=payload,
        alone_group=alone,
    )


def _shard(model: TransformerLM, mesh: Any, policy: Any, *, prefetch: bool) -> None:
    """``fully_shard`` as torchtitan applies it to a decoder with tied embeddings."""
    from torch.distributed.fsdp import fully_shard

    options: dict[str, Any] = {"mesh": mesh}
    if policy is not None:
        options["mp_policy"] = policy
    tokens, _, _, head = fully_shard(
        [model.tokens, model.positions, model.norm, model.head], reshard_after_forward=False, **options
    )
    blocks = [fully_shard(block, reshard_after_forward=True, **options) for block in model.blocks]
    fully_shard(model, **options)
    if not prefetch:
        return
    tokens.set_modules_to_forward_prefetch(blocks[:1])
    head.set_modules_to_backward_prefetch(blocks[-1:])
    for index, block in enumerate(blocks):
        block.set_modules_to_forward_prefetch(blocks[index + 1 : index + 2])
        block.set_modules_to_backward_prefetch(blocks[index - 1 : index] if index > 0 else [])


def _one_rank_group(world_size: int) -> Any:
    """This rank's own process group (every rank creates every one, in the same order, as torch asks)."""
    mine = None
    for rank in range(world_size):
        group = dist.new_group([rank])
        if rank == dist.get_rank():
            mine = group
    return mine


def _padded_elements(params: list[nn.Parameter], world_size: int) -> int:
    """Elements of one unit's all-gather output: each parameter's dim 0 padded to a multiple of ``n``."""
    total = 0
    for p in params:
        shape = tuple(p.shape) or (1,)
        total += math.ceil(shape[0] / world_size) * world_size * math.prod(shape[1:])
    return total


def sync_world(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    dist.barrier()


def idle_barrier(poll_s: float = 0.005) -> None:
    """A barrier whose waiting ranks sleep: the one-GPU baseline's peers wait here while rank 0 times its
    steps alone. ``dist.barrier()`` blocks in a device synchronisation, which spins a CPU core per rank
    (CUDA's default schedule spins while a process has fewer contexts than the host has cores), so rank
    0's host-paced steps would share the host with N-1 spinning cores: not one GPU alone, as the
    reference loop's one-GPU run (a job of its own) is."""
    work = dist.barrier(async_op=True)
    while work is not None and not work.is_completed():
        time.sleep(poll_s)
    if work is not None:
        work.wait()
