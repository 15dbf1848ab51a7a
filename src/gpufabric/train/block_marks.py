"""Points inside a step at each block's edges: where its forward and its backward compute start and end.

Two probes need them: the contention probe starts the step's collectives where backward finishes the
block whose gradients the first bucket waits for (``contention``), and the inside-step probe times each
block's compute on the compute stream, synced against the twin (``inside_step``). The points are taken
so that FSDP2's own work falls outside them (torch/distributed/fsdp/_fully_shard/_fsdp_state.py):

- forward start: a forward pre-hook registered after FSDP2's (it prepends its own), so it runs once
  FSDP2 has made the compute stream wait for the block's all-gather and copied the parameters out;
- forward end: a forward hook registered after FSDP2's post-forward;
- backward start: a hook on the block's output tensor registered from that forward hook, so after the
  pre-backward hook FSDP2's post-forward put on the same tensor (hooks on one tensor run in the order
  they were registered): FSDP2 has waited for the backward all-gather by then;
- backward end: a hook on the block's input tensor as FSDP2's pre-forward handed it on, which runs
  before FSDP2's post-backward (the reduce-scatter) on the node that made that tensor.

Under DDP there are no FSDP2 hooks and the points are the block's edges as backward reaches them (the
input's gradient is the last thing a block's backward computes). Hooks run on the thread that runs
the step, or on autograd's device thread in backward; ``on_mark`` is called there.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

import torch
from torch import nn

Point = Literal["forward_start", "forward_end", "backward_start", "backward_end"]
OnMark = Callable[[int, Point], None]


def mark_blocks(blocks: Sequence[nn.Module], on_mark: OnMark) -> Callable[[], None]:
    """Call ``on_mark(block index, point)`` at each block's four points in every step until the returned
    function removes the hooks."""
    handles: list[Any] = []
    for index, block in enumerate(blocks):
        handles.append(block.register_forward_pre_hook(_pre_forward(index, on_mark), with_kwargs=True))
        handles.append(block.register_forward_hook(_post_forward(index, on_mark)))

    def remove() -> None:
        for handle in handles:
            handle.remove()

    return remove


def model_blocks(model: nn.Module) -> list[nn.Module]:
    """The transformer blocks of a wrapped model: DDP keeps the model as ``module``, FSDP2 in place."""
    inner = getattr(model, "module", model)
    return list(getattr(inner, "blocks", []))


def _first_grad_tensor(value: Any) -> torch.Tensor | None:
    """The first tensor that requires a gradient in a block's arguments or output."""
    if isinstance(value, torch.Tensor):
        return value if value.requires_grad else None
    if isinstance(value, (list, tuple)):
        for item in value:
            found = _first_grad_tensor(item)
            if found is not None:
                return found
    return None


def _pre_forward(index: int, on_mark: OnMark) -> Callable[..., None]:
    def hook(_module: nn.Module, args: tuple[Any, ...], _kwargs: dict[str, Any]) -> None:
        on_mark(index, "forward_start")
        tensor = _first_grad_tensor(args)
        if tensor is not None and torch.is_grad_enabled():
            tensor.register_hook(_on_grad(index, "backward_end", on_mark))  # type: ignore[no-untyped-call]

    return hook


def _post_forward(index: int, on_mark: OnMark) -> Callable[..., None]:
    def hook(_module: nn.Module, _args: tuple[Any, ...], output: Any) -> None:
        on_mark(index, "forward_end")
        tensor = _first_grad_tensor(output)
        if tensor is not None and torch.is_grad_enabled():
            tensor.register_hook(_on_grad(index, "backward_start", on_mark))  # type: ignore[no-untyped-call]

    return hook


def _on_grad(index: int, point: Point, on_mark: OnMark) -> Callable[[torch.Tensor], None]:
    def hook(_grad: torch.Tensor) -> None:  # returns None: the gradient passes unchanged
        on_mark(index, point)

    return hook
