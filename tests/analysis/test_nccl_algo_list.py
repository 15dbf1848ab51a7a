"""``nccl_algo_allows`` reads NCCL_ALGO as NCCL's parseList does (NVIDIA/nccl src/graph/tuning.cc, vendored in
tests/fixtures/references/nccl/): exact names, '^' for exclusion, '^' alone excluding nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpufabric.analysis.doctor.checks_bandwidth import nccl_algo_allows

TUNING = Path(__file__).parents[1] / "fixtures" / "references" / "nccl" / "tuning.cc"


@pytest.mark.parametrize(
    ("value", "tree"),
    [
        (None, True),
        ("", True),
        ("Ring", False),
        ("Ring,Tree", True),
        ("ring,tree", True),  # parseList compares with strcasecmp
        ("NVLS,NVLSTree", False),  # NVLSTree is another algorithm, not Tree
        ("^", True),  # excludes nothing: what a SkyPilot task on GKE TCPXO sets
        ("^Tree", False),
        ("^Ring", True),
        ("allreduce:ring", True),  # only one function restricted
    ],
)
def test_tree_as_nccl_reads_the_list(value: str | None, tree: bool) -> None:
    assert nccl_algo_allows(value, "Tree") is tree


def test_the_semantics_are_nccls() -> None:
    code = TUNING.read_text()
    assert "strcasecmp(elem, elems[e]) == 0" in code  # exact, case-insensitive names
    assert "if (elemList[0] == '^') {" in code and "list[p * nelems + e] = unset;" in code
