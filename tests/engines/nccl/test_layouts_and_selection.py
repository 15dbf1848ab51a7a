"""What the direct engine sends where (without a GPU), and how the engine is chosen and refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpufabric.bench.config import BenchConfig, resolve_engine
from gpufabric.bench.semantics import alltoallv_peer_bytes, layout
from gpufabric.engines import NCCL_LIB_ENV
from gpufabric.engines.nccl import library
from gpufabric.engines.nccl.collectives import _p2p_pairs
from gpufabric.errors import UsageError


def test_sendrecv_is_a_ring() -> None:
    shape = layout("sendrecv", 64, 4, 4)
    pairs = _p2p_pairs(shape, 1000, 2000, root=0, rank=1)
    assert pairs == [(2, 1000, 16, 2000, 0), (0, 1000, 0, 2000, 16)]


def test_gather_root_receives_every_rank_in_order() -> None:
    shape = layout("gather", 256, 4, 4)  # 16 floats per rank
    pairs = _p2p_pairs(shape, 0, 5000, root=2, rank=2)
    assert [(p[0], p[3], p[4]) for p in pairs] == [(r, 5000 + r * 64, 16) for r in range(4)]
    assert _p2p_pairs(shape, 0, 5000, root=2, rank=0) == [(2, 0, 16, 5000, 0)]


def test_alltoallv_counts_match_nccl_tests_pattern_and_sum_to_the_row() -> None:
    shape = layout("alltoallv", 1 << 20, 4, 4)
    pairs = _p2p_pairs(shape, 0, 0, root=0, rank=1)
    total = shape.param_count * 4 * 4
    assert [p[2] * 4 for p in pairs] == [alltoallv_peer_bytes(1, d, 4, total) for d in range(4)]
    assert sum(p[2] for p in pairs) * 4 <= shape.size_bytes


def test_engine_choice() -> None:
    cfg = BenchConfig()
    assert resolve_engine(cfg, "gloo") == "torch"
    assert resolve_engine(cfg.model_copy(update={"engine": "nccl"}), "nccl") == "nccl"
    with pytest.raises(UsageError, match="--engine nccl"):
        resolve_engine(cfg.model_copy(update={"engine": "nccl"}), "gloo")


@pytest.mark.parametrize(
    ("update", "match"),
    [({"collectives": ["gather"]}, "gather run on the NCCL engine only"), ({"dtype": "fp8"}, "f8e4m3")],
)
def test_the_torch_engine_refuses_what_only_nccl_has(update: dict[str, object], match: str) -> None:
    with pytest.raises(UsageError, match=match):
        resolve_engine(BenchConfig(**update).model_copy(update={"engine": "torch"}), "gloo")


def test_all_means_the_collectives_every_engine_has() -> None:
    assert "gather" not in BenchConfig(collectives=["all"]).collectives
    assert BenchConfig(collectives=["all,gather,scatter_perf"]).collectives[-2:] == ["gather", "scatter"]


def test_named_library_that_is_not_a_file_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"--nccl-lib: .* is not a file"):
        library.load({NCCL_LIB_ENV: str(tmp_path / "nope.so")})


def test_a_file_that_is_not_a_library_is_one_line(tmp_path: Path) -> None:
    bogus = tmp_path / "libnccl.so.2"
    bogus.write_text("not an ELF file")
    with pytest.raises(UsageError, match="cannot be loaded"):
        library.load({NCCL_LIB_ENV: str(bogus)})


def test_version_codes() -> None:
    assert library.version_string(22809) == "2.28.9"
    assert library.version_string(2708) == "2.7.8"
