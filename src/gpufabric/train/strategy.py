"""Data-parallel wrappers and what each communicates: DDP with a bucket-counting hook, and FSDP2.

- DDP: a comm hook records every gradient bucket it all-reduces (elements, dtype) and then does exactly
  what torch's default does (``default_hooks.allreduce_hook``: divide by the world size, all-reduce). So
  the bytes all-reduced per step are counted from the buckets themselves, and a compute-only step is the
  same wrapped model under ``no_sync()`` (the hook proves it: no bucket is reduced there).
- FSDP (``torch.distributed.fsdp.fully_shard``): one unit per transformer block plus the root. Blocks are
  resharded after forward, so each is all-gathered twice (forward, backward) and reduce-scattered once;
  the root is gathered once. Sizes are the padded flat sizes FSDP2 moves (dim 0 split into ``n`` equal
  chunks), counted from the parameters and their dtype. FSDP gathers parameters even with gradient sync
  off, so its compute-only step is a local replica of the model with no wrapper.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.distributed as dist
from torch import nn

from gpufabric.train.config import TrainConfig
from gpufabric.train.result import CollectiveCall
from gpufabric.train.transformer import TransformerLM, build_model, lm_loss

NCCL_TESTS_DTYPES = {torch.float32: "float", torch.bfloat16: "bfloat16", torch.float16: "half"}


def dtype_name(dtype: torch.dtype) -> str:
    return NCCL_TESTS_DTYPES.get(dtype, str(dtype).removeprefix("torch."))


@dataclass
class BucketLog:
    """Every bucket DDP handed to the hook since the last ``reset``: (elements, dtype)."""

    buckets: list[tuple[int, torch.dtype]] = field(default_factory=list)

    def reset(self) -> None:
        self.buckets = []

    def hook(self, state: Any, bucket: Any) -> Any:
        from torch.distributed.algorithms.ddp_comm_hooks import default_hooks

        buffer = bucket.buffer()
        self.buckets.append((int(buffer.numel()), buffer.dtype))
        return default_hooks.allreduce_hook(state, bucket)

    def calls(self) -> list[CollectiveCall]:
        return [
            CollectiveCall(kind="all_reduce", size_bytes=n * _itemsize(dt), dtype=dtype_name(dt))
            for n, dt in self.buckets
        ]


def _itemsize(dtype: torch.dtype) -> int:
    return int(torch.empty((), dtype=dtype).element_size())


@dataclass
class Trainer:
    """One model + optimizer + how to run a step; ``step(batch)`` does forward, backward, update."""

    model: nn.Module
    optimizer: torch.optim.Optimizer
    around_backward: Callable[[], Any] | None = None

    def step(self, batch: torch.Tensor) -> None:
        loss = lm_loss(self.model, batch)
        if self.around_backward is not None:
            with self.around_backward():
                loss.backward()  # type: ignore[no-untyped-call]
        else:
            loss.backward()  # type: ignore[no-untyped-call]
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)


def _optimizer(model: nn.Module) -> torch.optim.Optimizer:
    return torch.optim.AdamW(model.parameters(), lr=1e-4)


def local_trainer(config: TrainConfig, device: torch.device, dtype: torch.dtype) -> Trainer:
    """The model alone, no wrapper, no communication (FSDP's compute step and the 1-rank baseline)."""
    model = build_model(config.model, seed=config.seed, device=device, dtype=dtype)
    return Trainer(model, _optimizer(model))


@dataclass
class DataParallel:
    """The wrapped trainer, its compute-only twin, and the collectives of one synced step."""

    synced: Trainer
    compute_only: Trainer
    compute_method: str
    payload: Callable[[], list[CollectiveCall]]
    bucket_log: BucketLog | None = None


def wrap(config: TrainConfig, device: torch.device, dtype: torch.dtype, world_size: int) -> DataParallel:
    model = build_model(config.model, seed=config.seed, device=device, dtype=dtype)
    if config.strategy == "ddp":
        return _ddp(config, model, device)
    return _fsdp(config, model, device, dtype, world_size)


def _ddp(config: TrainConfig, model: TransformerLM, device: torch.device) -> DataParallel:
    from torch.nn.parallel import DistributedDataParallel as DDP

    ids = [device.index] if device.type == "cuda" else None
    ddp = DDP(model, device_ids=ids, bucket_cap_mb=config.bucket_cap_mb)
    log = BucketLog()
    # A lambda: DDP rejects a hook whose annotations are not the real GradBucket/Future classes, and
    # postponed annotations make them strings.
    ddp.register_comm_hook(None, lambda state, bucket: log.hook(state, bucket))
    optimizer = _optimizer(ddp)
    # The forward must run under no_sync too: DDP decides at forward time whether backward syncs.
    compute = _NoSyncTrainer(ddp, optimizer)
    return DataParallel(
        synced=Trainer(ddp, optimizer),
        compute_only=compute,
        compute_method="the same DDP model under no_sync(): forward, backward and optimizer step with the "
        "gradient all-reduce removed (the bucket hook confirms no bucket was reduced)",
        payload=log.calls,
        bucket_log=log,
    )


class _NoSyncTrainer(Trainer):
    def step(self, batch: torch.Tensor) -> None:
        with self.model.no_sync():  # type: ignore[operator]
            loss = lm_loss(self.model, batch)
            loss.backward()  # type: ignore[no-untyped-call]
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)


def _fsdp(
    config: TrainConfig, model: TransformerLM, device: torch.device, dtype: torch.dtype, world_size: int
) -> DataParallel:
    from torch.distributed.fsdp import fully_shard

    units: list[tuple[nn.Module, int]] = []  # (module, all-gathers per step)
    for block in model.blocks:
        fully_shard(block, reshard_after_forward=True)
        units.append((block, 2))
    block_params = {id(p) for block in model.blocks for p in block.parameters()}
    root_params = [p for p in model.parameters() if id(p) not in block_params]
    sizes = [(_padded_bytes(list(block.parameters()), world_size), gathers) for block, gathers in units]
    sizes.append((_padded_bytes(root_params, world_size), 1))
    fully_shard(model, reshard_after_forward=False)
    name = dtype_name(dtype)

    def payload() -> list[CollectiveCall]:
        calls = [
            CollectiveCall(kind="all_gather", size_bytes=s, dtype=name) for s, g in sizes for _ in range(g)
        ]
        calls += [CollectiveCall(kind="reduce_scatter", size_bytes=s, dtype=name) for s, _ in sizes]
        return calls

    return DataParallel(
        synced=Trainer(model, _optimizer(model)),
        compute_only=local_trainer(config, device, dtype),
        compute_method="a local replica of the model on every rank, no wrapper (FSDP gathers parameters "
        "even with gradient sync off, so it has no communication-free mode)",
        payload=payload,
    )


def _padded_bytes(params: list[nn.Parameter], world_size: int) -> int:
    """Bytes of one unit's all-gather output: each parameter's dim 0 padded to a multiple of ``n``."""
    total = 0
    for p in params:
        shape = tuple(p.shape) or (1,)
        rows = math.ceil(shape[0] / world_size) * world_size
        total += rows * math.prod(shape[1:]) * p.element_size()
    return total


def sync_world(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    dist.barrier()
