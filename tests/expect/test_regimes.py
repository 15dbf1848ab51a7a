"""The regime rule at large sizes (regimes.py's docstring states it)."""

from __future__ import annotations

import pytest

from gpufabric.expect.regimes import Regime, choose_regime


@pytest.mark.parametrize(
    ("collective", "nodes", "nvls", "collnet", "expected"),
    [
        ("all_reduce", 1, None, False, Regime.RING),
        ("all_reduce", 1, True, False, Regime.NVLS),
        ("all_reduce", 2, None, False, Regime.TREE),
        ("all_reduce", 8, None, False, Regime.RING),
        ("all_reduce", 8, None, True, Regime.COLLNET),
        ("all_gather", 16, None, False, Regime.RING),
        ("reduce_scatter", 1, True, False, Regime.RING),
        ("broadcast", 2, None, False, Regime.RING),
        ("reduce", 1, True, False, Regime.RING),
        ("alltoall", 2, None, False, Regime.P2P),
        ("sendrecv", 1, None, False, Regime.P2P),
        ("gather", 2, None, False, Regime.P2P),
        ("scatter", 2, None, False, Regime.P2P),
    ],
)
def test_the_rule(collective: str, nodes: int, nvls: bool | None, collnet: bool, expected: Regime) -> None:
    regime, reason = choose_regime(collective, nodes=nodes, nvls=nvls, collnet=collnet)  # type: ignore[arg-type]
    assert regime is expected
    assert reason
