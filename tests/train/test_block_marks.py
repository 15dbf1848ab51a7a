"""Where the block marks fall in a real step (``train.block_marks``), where the contention probe starts
(``contention.first_ready_start``) and where the scheduled probe issues each call
(``scheduled_probe.IssuePoints``): the tiny model on CPU, FSDP2 over a real one-rank gloo group."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
import torch.distributed as dist

from gpufabric.train.block_marks import Point, mark_blocks, model_blocks
from gpufabric.train.config import MODEL_PRESETS
from gpufabric.train.contention import first_ready_start
from gpufabric.train.result import CollectiveCall
from gpufabric.train.schedule import Layout, fsdp_schedule
from gpufabric.train.scheduled_probe import IssuePoints
from gpufabric.train.transformer import build_model, lm_loss, synthetic_batches

TINY = MODEL_PRESETS["tiny"]


@pytest.fixture
def one_rank_group(tmp_path: Path) -> Iterator[None]:
    dist.init_process_group("gloo", init_method=f"file://{tmp_path / 'store'}", rank=0, world_size=1)
    try:
        yield
    finally:
        dist.destroy_process_group()


def _step(model: torch.nn.Module) -> None:
    batch = synthetic_batches(TINY, 2, rank=0, seed=0, device=torch.device("cpu"))[0]
    lm_loss(model, batch).backward()  # type: ignore[no-untyped-call]


def test_marks_fall_inside_fsdp2s_hooks(one_rank_group: None) -> None:
    from torch.distributed.fsdp import fully_shard
    from torch.distributed.fsdp._fully_shard._fsdp_common import TrainingState

    model = build_model(TINY, seed=0, device=torch.device("cpu"), dtype=torch.float32)
    blocks = [fully_shard(block) for block in model.blocks]
    fully_shard(model)
    seen: list[tuple[int, Point, TrainingState]] = []

    def on_mark(index: int, point: Point) -> None:
        # FSDP2's own state of that block's parameters when the mark is taken (a private attribute: the
        # one place that says which of its hooks has run).
        state = blocks[index]._get_fsdp_state()._fsdp_param_group._training_state  # type: ignore[union-attr]
        seen.append((index, point, state))

    remove = mark_blocks(model_blocks(model), on_mark)
    _step(model)
    remove()
    # Forward: after FSDP2's pre-forward (its all-gather waited for) and after its post-forward. Backward:
    # after its pre-backward (the backward all-gather waited for), before its post-backward (the
    # reduce-scatter), block 1 then block 0.
    assert seen == [
        (0, "forward_start", TrainingState.FORWARD),
        (0, "forward_end", TrainingState.IDLE),
        (1, "forward_start", TrainingState.FORWARD),
        (1, "forward_end", TrainingState.IDLE),
        (1, "backward_start", TrainingState.PRE_BACKWARD),
        (1, "backward_end", TrainingState.PRE_BACKWARD),
        (0, "backward_start", TrainingState.PRE_BACKWARD),
        (0, "backward_end", TrainingState.PRE_BACKWARD),
    ]
    seen.clear()
    _step(model)
    assert seen == []  # removed: a timed step runs no hook of ours


def test_marks_on_a_plain_model_follow_backward_from_the_last_block() -> None:
    model = build_model(TINY, seed=0, device=torch.device("cpu"), dtype=torch.float32)
    ends: list[int] = []
    remove = mark_blocks(model_blocks(model), lambda i, p: ends.append(i) if p == "backward_end" else None)
    _step(model)
    remove()
    assert ends == [1, 0]


def _call(ready: float, phase: str = "backward") -> CollectiveCall:
    return CollectiveCall.model_validate(
        {"kind": "all_reduce", "size_bytes": 1024, "dtype": "float", "phase": phase, "ready_at": ready}
    )


def test_the_contention_probe_starts_where_the_first_bucket_is_ready() -> None:
    model = build_model(TINY, seed=0, device=torch.device("cpu"), dtype=torch.float32)
    layout, blocks = Layout.of(TINY), model_blocks(model)
    ends = [layout.backward_end(i) for i in range(len(blocks))]
    # DDP: buckets ready when backward ends block 1 (the last), then block 0, then the embeddings.
    start = first_ready_start([_call(ends[1]), _call(ends[0]), _call(1.0)], blocks, ends)
    assert start is not None and start.block is blocks[1] and start.fraction == ends[1] > layout.head
    # Every bucket waits for the embeddings (one bucket): nothing to run beside, backward's start as before.
    assert first_ready_start([_call(1.0)], blocks, ends) is None
    # FSDP2: its first backward gather is ready at backward's start.
    gather = _call(0.0).model_copy(update={"kind": "all_gather"})
    scatter = _call(0.0).model_copy(update={"kind": "reduce_scatter"})
    schedule = fsdp_schedule(layout, [gather] * TINY.layers, [scatter] * TINY.layers, gather, scatter)
    assert first_ready_start(schedule, blocks, ends) is None


def test_the_scheduled_probe_issues_each_bucket_at_its_own_block() -> None:
    layout = Layout.of(TINY)
    ends = [layout.backward_end(i) for i in range(TINY.layers)]
    # DDP's buckets in issue order: two readied by block 1 (the last), then one ready at 1.0, which is both
    # block 0's end and backward's in the layout (the embeddings' lookup has no FLOPs there): it waits for
    # backward's end, never issued before the tied embedding's gradients exist; forward calls: none here.
    calls = [_call(ends[1]), _call(ends[1]), _call(ends[0]), _call(0.0, phase="forward")]
    points = IssuePoints.of(calls, ends)
    assert ends[0] == 1.0 and points.by_block == {1: [0, 1]} and points.at_end == [2]
    # A call ready at no block's end (the final norm's gradients alone, at the head's end) waits for
    # backward's end too: issued late rather than beside compute it does not meet.
    alone = IssuePoints.of([_call(layout.head)], ends)
    assert alone.by_block == {} and alone.at_end == [0] and not alone.empty
    assert IssuePoints.of([_call(0.0, phase="forward")], ends).empty
