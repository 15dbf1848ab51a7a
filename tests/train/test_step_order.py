"""The throughput steps' ABBA blocks (``train.step_order``): the order timing runs them in and the
indices the exposed reading leaves out of documents recorded without a lead-in. Orders written out by
hand."""

from __future__ import annotations

import pytest

from gpufabric.train.step_order import SYNCED, TWIN, abba_blocks, first_of_each_block


def test_blocks_alternate_abba_and_the_last_of_a_side_is_shorter() -> None:
    assert list(abba_blocks(12, 5)) == [
        (SYNCED, 0, 5), (TWIN, 0, 5), (TWIN, 5, 5), (SYNCED, 5, 5), (SYNCED, 10, 2), (TWIN, 10, 2),
    ]  # fmt: skip
    # Every step of each side exactly once, in index order.
    for count, block in ((96, 5), (20, 6), (3, 8), (1, 1)):
        for side in (SYNCED, TWIN):
            steps = [
                i for s, first, n in abba_blocks(count, block) if s == side for i in range(first, first + n)
            ]
            assert steps == list(range(count))


def test_each_block_s_first_step() -> None:
    # 96 steps in blocks of 5: twenty blocks a side, the first steps 0, 5, ..., 95 on both sides.
    synced, twin = first_of_each_block(96, 5)
    assert synced == twin == set(range(0, 96, 5))
    assert first_of_each_block(0, 5) == (set(), set())


def test_a_block_of_no_steps_is_refused() -> None:
    with pytest.raises(ValueError, match="block must be at least 1"):
        list(abba_blocks(4, 0))
