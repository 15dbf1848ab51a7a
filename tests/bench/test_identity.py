"""Rank identity from each launcher's variables (environment injected, never os.environ)."""

from __future__ import annotations

import pytest

from gpufabric.bench.identity import rank_identity
from gpufabric.errors import UsageError


def test_torchrun_and_local_launcher_variables() -> None:
    ident = rank_identity(
        {
            "RANK": "3",
            "WORLD_SIZE": "8",
            "LOCAL_RANK": "1",
            "LOCAL_WORLD_SIZE": "2",
            "MASTER_ADDR": "10.0.0.1",
            "MASTER_PORT": "29500",
        }
    )
    assert (ident.rank, ident.world_size, ident.local_rank, ident.source) == (3, 8, 1, "torchrun")
    assert ident.init_method == "tcp://10.0.0.1:29500"


def test_openmpi_variables() -> None:
    ident = rank_identity(
        {"OMPI_COMM_WORLD_RANK": "5", "OMPI_COMM_WORLD_SIZE": "16", "OMPI_COMM_WORLD_LOCAL_RANK": "5"}
    )
    assert (ident.rank, ident.world_size, ident.local_rank, ident.source) == (5, 16, 5, "openmpi")
    assert ident.init_method == "env://"


def test_slurm_variables_with_packed_tasks_per_node() -> None:
    ident = rank_identity(
        {
            "SLURM_PROCID": "9",
            "SLURM_NTASKS": "16",
            "SLURM_LOCALID": "1",
            "SLURM_NTASKS_PER_NODE": "8(x2)",
            "MASTER_ADDR": "fe80::1",
            "MASTER_PORT": "1234",
        }
    )
    assert (ident.rank, ident.local_rank, ident.local_world_size, ident.source) == (9, 1, 8, "slurm")
    assert ident.init_method == "tcp://[fe80::1]:1234"


def test_torchrun_wins_over_slurm_when_both_are_set() -> None:
    ident = rank_identity({"RANK": "0", "WORLD_SIZE": "2", "SLURM_PROCID": "7", "SLURM_NTASKS": "8"})
    assert ident.source == "torchrun"


def test_nothing_set_is_a_single_process() -> None:
    ident = rank_identity({})
    assert (ident.rank, ident.world_size, ident.source) == (0, 1, "single")


@pytest.mark.parametrize(
    "environ",
    [{"RANK": "1"}, {"RANK": "4", "WORLD_SIZE": "4"}, {"RANK": "x", "WORLD_SIZE": "2"}],
)
def test_inconsistent_variables_are_one_line_usage_errors(environ: dict[str, str]) -> None:
    with pytest.raises(UsageError) as info:
        rank_identity(environ)
    assert "\n" not in str(info.value)
