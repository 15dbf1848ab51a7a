"""Will the model fit? A lower bound on a training rank's memory, checked before any rank starts.

Without it ``--hidden 100000000`` launches the ranks, which die on a 102 GB embedding allocation with
the allocator's message. The bound counts only what scales with the parameters, as ``bench``'s
``check_memory`` counts only its buffers: each rank holds the weights, their gradients, DDP's flat
gradient buckets (a second copy of the gradients) and AdamW's two moments, all in the training dtype,
and all of it twice under DDP: its communication-free twin is a second DDP model over a one-rank group
(``strategy._ddp``); activations come on top. FSDP shards the synced model, but its communication-free
twin is the whole model on a one-rank mesh with its own optimizer, in fp32 (``strategy._fsdp``):
weights, gradients and two moments, 16 bytes a parameter. No torch here.
"""

from __future__ import annotations

from gpufabric.errors import UsageError
from gpufabric.train.config import HEAD_DIM, ModelSpec
from gpufabric.units import human_size

COPIES_PER_PARAMETER = 2 * 5
"""Weights + gradients + DDP bucket copy of the gradients + AdamW exp_avg + exp_avg_sq, for the synced
model and for its one-rank twin."""
BYTES_GPU = 2  # bf16 on GPU ranks
BYTES_CPU = 4  # fp32 on CPU ranks


FSDP_TWIN_BYTES = 4 * 4
"""FSDP's twin: fp32 weights, gradients and AdamW's two moments."""


def rank_bytes(spec: ModelSpec, *, on_gpu: bool, strategy: str = "ddp") -> int:
    """Lower bound on one rank's memory for ``spec``: the parameter-sized copies, no activations."""
    if strategy == "fsdp":
        return spec.parameter_count() * FSDP_TWIN_BYTES
    return spec.parameter_count() * COPIES_PER_PARAMETER * (BYTES_GPU if on_gpu else BYTES_CPU)


def largest_hidden(
    spec: ModelSpec, *, ranks: int, available: int, on_gpu: bool, strategy: str = "ddp"
) -> int | None:
    """The widest ``--hidden`` (a multiple of ``HEAD_DIM``) whose ranks fit ``available``; None if none."""

    def fits(width: int) -> bool:
        shape = spec.model_copy(update={"hidden": width, "heads": width // HEAD_DIM})
        return ranks * rank_bytes(shape, on_gpu=on_gpu, strategy=strategy) <= available

    if not fits(HEAD_DIM):
        return None
    low, high = 1, max(1, spec.hidden // HEAD_DIM)  # in heads; fits(low), and high does not
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if fits(middle * HEAD_DIM) else (low, middle)
    return low * HEAD_DIM


def check_model_memory(
    spec: ModelSpec, *, ranks: int, available: int | None, on_gpu: bool, where: str, strategy: str = "ddp"
) -> None:
    """Refuse a model whose ``ranks`` ranks can never fit in ``available`` bytes of ``where``."""
    if available is None:
        return
    per_rank = rank_bytes(spec, on_gpu=on_gpu, strategy=strategy)
    needed = ranks * per_rank
    if needed <= available:
        return
    copies = (
        "4 fp32 copies (FSDP's one-rank twin: weights, gradients, AdamW moments)"
        if strategy == "fsdp"
        else f"{COPIES_PER_PARAMETER} {'bf16' if on_gpu else 'fp32'} copies: weights, gradients, DDP "
        "buckets, AdamW moments, of the synced model and of its one-rank twin"
    )
    widest = largest_hidden(spec, ranks=ranks, available=available, on_gpu=on_gpu, strategy=strategy)
    hint = (
        f"use --hidden {widest} or less, or a smaller --model/--layers"
        if widest is not None
        else "use a smaller --model or --layers"
    )
    raise UsageError(
        f"--hidden/--layers: the model ({spec.parameter_count():,} parameters) needs at least "
        f"{human_size(needed)} of {where} ({ranks} rank(s) x {copies}), more than the "
        f"{human_size(available)} there is; {hint}"
    )
