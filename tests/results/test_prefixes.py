"""Launcher prefixes come off a line, outermost first, and say which rank wrote it."""

from __future__ import annotations

import pytest

from gpufabric.results.readers.prefixes import Source, split_prefixes

CASES = [
    # (raw line, expected tags, expected text)
    ("        1024            16     float", (), "        1024            16     float"),
    (
        "(head, rank=0, pid=3808) [1,0]<stdout>:        1024            16     float",
        (("skypilot", 0), ("mpirun", 0)),
        "        1024            16     float",
    ),
    ("(worker1, rank=1, pid=2769, ip=10.100.10.12) Worker nodes", (("skypilot", 1),), "Worker nodes"),
    ("[1,3]<stderr>:# nThread 1", (("mpirun", 3),), "# nThread 1"),
    ("[pod/nccl-worker-2/main] # Avg bus bandwidth : 1.2", (("pod", 2),), "# Avg bus bandwidth : 1.2"),
    ("12: #  Rank  0 Group 0", (("slurm", 12),), "#  Rank  0 Group 0"),
    ("2025-01-07T08:30:00.123456789Z # size count", (), "# size count"),
    (
        "[pod/w-0/c] 2025-01-07T08:30:00Z \x1b[32m# Out of bounds values : 0 OK\x1b[0m\r\n",
        (("pod", 0),),
        "# Out of bounds values : 0 OK",
    ),
    ("2024-05-01 10:00:00,123 0: hello", (("slurm", 0),), "hello"),
]


@pytest.mark.parametrize(("raw", "tags", "text"), CASES)
def test_split_prefixes(raw: str, tags: tuple[tuple[str, int], ...], text: str) -> None:
    source, rest = split_prefixes(raw)
    assert source.tags == tags
    assert rest == text


def test_a_data_line_is_never_taken_for_a_slurm_label() -> None:
    line = "     2097152        524288     float     sum      -1    37.48   55.96   83.94       0"
    assert split_prefixes(line) == (Source(), line)


def test_rank_zero_of_the_innermost_launcher_sorts_first() -> None:
    head = Source((("skypilot", 0), ("mpirun", 0)))
    worker = Source((("skypilot", 1), ("mpirun", 8)))
    other_mpi = Source((("skypilot", 0), ("mpirun", 1)))
    assert min([worker, other_mpi, head], key=lambda s: s.rank_order) == head
