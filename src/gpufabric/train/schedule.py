"""When each collective of a step can start and when compute waits for it, and what that leaves exposed.

A step's compute is laid out on its own clock (the compute-only twin's forward and backward times),
split over the model's pieces in proportion to their FLOPs per token (``ModelSpec.flops_per_token``'s
terms): forward runs embeddings, blocks 0..L-1, head; backward runs head, blocks L-1..0, embeddings.
Each ``CollectiveCall`` carries ``phase``, ``ready_at`` (the fraction of that phase after which it can be
issued) and ``needed_at`` (where compute waits for it; None: only the optimizer step does).

``exposed_ms`` plays the calls on one queue in issue order, as NCCL runs one communicator's operations
(DDP's buckets; FSDP2's all-gathers and reduce-scatters share its process group): a call starts when it
is ready and the one before it is done; where compute needs a call that has not finished, compute
stalls and every later point of the step moves by the stall. What the step pays beyond its compute is
the exposed communication. No torch here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gpufabric.train.model_shape import ModelSpec
from gpufabric.train.result import CollectiveCall

END = 1.0


@dataclass(frozen=True)
class Layout:
    """Fractions of a phase at which each piece of the model starts and ends."""

    layers: int
    block: float  # one block's share of a phase
    head: float  # the output head's share (tied embedding matmul)

    @classmethod
    def of(cls, spec: ModelSpec) -> Layout:
        h = spec.hidden
        block = 6 * (4 * h * h + 2 * h * h * spec.ffn_mult) + 12 * h * spec.seq_len
        head = 6 * spec.vocab * h
        total = spec.layers * block + head
        return cls(layers=spec.layers, block=block / total, head=head / total)

    def forward_start(self, block: int) -> float:
        return block * self.block

    def backward_start(self, block: int) -> float:
        return self.head + (self.layers - 1 - block) * self.block

    def backward_end(self, block: int) -> float:
        return self.head + (self.layers - block) * self.block

    def grad_ready(self, name: str) -> float:
        """When backward has finished the gradient of parameter ``name`` (``TransformerLM``'s names).
        The tied token embedding and the positions finish last (the embedding lookup's backward)."""
        if name.startswith("blocks."):
            return self.backward_end(int(name.split(".")[1]))
        if name.startswith("norm."):
            return self.head
        return END


def fsdp_schedule(
    layout: Layout,
    gathers: Sequence[CollectiveCall],
    scatters: Sequence[CollectiveCall],
    outer_gather: CollectiveCall,
    outer_scatter: CollectiveCall,
) -> list[CollectiveCall]:
    """FSDP2's calls for one step in issue order, as ``strategy`` shards the model (torchtitan's layout:
    blocks resharded after forward, the embedding/norm/head unit kept), with one block of prefetch:
    forward gathers block i when block i-1 starts, backward gathers block i when block i+1's backward
    starts (the last block's when the head's backward starts), and reduce-scatters each unit's gradients as
    soon as its backward ends. ``gathers``/``scatters``: one per block, in block order."""
    last = layout.layers - 1

    def at(call: CollectiveCall, phase: str, ready: float, needed: float | None) -> CollectiveCall:
        return call.model_copy(update={"phase": phase, "ready_at": ready, "needed_at": needed})

    calls = [at(outer_gather, "forward", 0.0, 0.0)]
    for i, gather in enumerate(gathers):
        calls.append(at(gather, "forward", layout.forward_start(max(0, i - 1)), layout.forward_start(i)))
    calls.append(at(gathers[last], "backward", 0.0, layout.backward_start(last)))
    for i in range(last, -1, -1):
        if i > 0:
            calls.append(
                at(gathers[i - 1], "backward", layout.backward_start(i), layout.backward_start(i - 1))
            )
        calls.append(at(scatters[i], "backward", layout.backward_end(i), None))
    calls.append(at(outer_scatter, "backward", END, None))
    return calls


@dataclass(frozen=True)
class Exposure:
    """The simulated step: communication it pays beyond compute, and the serial time of its calls."""

    exposed_ms: float
    serial_ms: float
    forward_stall_ms: float


def exposed_ms(
    calls: Sequence[CollectiveCall], durations_ms: Sequence[float], *, forward_ms: float, backward_ms: float
) -> Exposure:
    """Play ``calls`` (issue order, each ``durations_ms[i]`` long on the wire) against a step whose compute
    takes ``forward_ms`` then ``backward_ms``; see the module docstring."""
    stalls: list[tuple[float, float]] = []  # (compute-clock point, stall added there)

    def clock(call: CollectiveCall, fraction: float) -> float:
        return fraction * forward_ms if call.phase == "forward" else forward_ms + fraction * backward_ms

    def wall(point: float) -> float:
        return point + sum(added for at, added in stalls if at <= point)

    queue_free = 0.0
    tail = 0.0  # when the last call compute does not wait for ends
    for call, duration in zip(calls, durations_ms, strict=True):
        start = max(wall(clock(call, call.ready_at)), queue_free)
        queue_free = start + duration
        if call.needed_at is None:
            tail = max(tail, queue_free)
            continue
        point = clock(call, call.needed_at)
        late = queue_free - wall(point)
        if late > 0:
            stalls.append((point, late))
    compute_end = wall(forward_ms + backward_ms)
    step_end = max(compute_end, tail)
    forward_stall = sum(added for at, added in stalls if at < forward_ms)
    return Exposure(
        exposed_ms=step_end - (forward_ms + backward_ms),
        serial_ms=sum(durations_ms),
        forward_stall_ms=forward_stall,
    )
