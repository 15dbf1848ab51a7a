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


@dataclass(frozen=True)
class Rates:
    """How fast compute and communication progress while both run (1.0: as fast as alone).

    On NVLink NCCL's kernels take SMs and memory bandwidth from the GEMMs beside them, and the GEMMs delay
    NCCL's kernels in turn; ``contention.probe_contention`` measures both on this machine, apart from the
    timed steps. ``Rates()`` is the model without contention (the collectives are free to overlap)."""

    compute: float = 1.0
    comm: float = 1.0

    def __post_init__(self) -> None:
        if not (0 < self.compute <= 1 and 0 < self.comm <= 1):
            raise ValueError(f"rates must lie in (0, 1]: {self}")


_EPS = 1e-9
SAME_POINT = _EPS
"""Two fractions of a phase closer than this are one point of the step (``Layout``'s sums of shares)."""


def exposed_ms(
    calls: Sequence[CollectiveCall],
    durations_ms: Sequence[float],
    *,
    forward_ms: float,
    backward_ms: float,
    rates: Rates | None = None,
) -> Exposure:
    """Play ``calls`` (issue order, each ``durations_ms[i]`` long on the wire when alone) against a step
    whose compute takes ``forward_ms`` then ``backward_ms``; see the module docstring. While a call runs
    beside compute, each advances at its ``rates`` fraction of its speed alone (piecewise-constant rates,
    so the simulation moves from one event to the next: a call ready, done or needed, forward's end)."""
    rate = rates or Rates()
    total = forward_ms + backward_ms

    def point(call: CollectiveCall, fraction: float) -> float:
        return fraction * forward_ms if call.phase == "forward" else forward_ms + fraction * backward_ms

    ready = [point(c, c.ready_at) for c in calls]
    needed = [None if c.needed_at is None else point(c, c.needed_at) for c in calls]
    now = progress = 0.0  # wall clock; compute done, on the compute clock
    index, left = 0, (durations_ms[0] if calls else 0.0)  # the call on the queue, its work left (ms alone)
    forward_end = compute_end = None
    while True:
        barrier = min((n for n in needed[index:] if n is not None), default=total)
        comm_on = index < len(calls) and progress >= ready[index] - _EPS
        compute_on = progress < min(total, barrier) - _EPS
        if forward_end is None and progress >= forward_ms - _EPS:
            forward_end = now
        if compute_end is None and progress >= total - _EPS:
            compute_end = now
        if not comm_on and not compute_on:
            if index >= len(calls):
                break
            comm_on = True  # a call needed before it is ready (not a schedule we build): issue it now
        compute_rate = rate.compute if comm_on else 1.0
        comm_rate = rate.comm if compute_on else 1.0
        steps = []
        if compute_on:
            upcoming = [forward_ms, ready[index] if index < len(calls) else total]
            target = min([min(total, barrier)] + [t for t in upcoming if t > progress + _EPS])
            steps.append((target - progress) / compute_rate)
        if comm_on:
            steps.append(left / comm_rate)
        step = max(0.0, min(steps))
        now += step
        if compute_on:
            progress = min(total, progress + step * compute_rate)
        if comm_on:
            left -= step * comm_rate
            if left <= _EPS:
                index += 1
                left = durations_ms[index] if index < len(calls) else 0.0
    end = max(now, compute_end if compute_end is not None else now)
    return Exposure(
        exposed_ms=end - total,
        serial_ms=sum(durations_ms),
        forward_stall_ms=(forward_end if forward_end is not None else end) - forward_ms,
    )
