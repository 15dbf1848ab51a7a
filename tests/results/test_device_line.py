"""nccl-tests' device line has one parser (``results/device_line``), and its three readers read every real
capture alike: the table reader (behind the launcher prefixes it peels), the NCCL log attestation (on the
raw line) and the doctor's byte scan of which ranks a file holds."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpufabric.analysis.doctor.runs import comm_members
from gpufabric.nccl_logs import attest_files
from gpufabric.results.device_line import DeviceLine, parse_device_line
from gpufabric.results.readers.nccl_header import parse_device
from gpufabric.results.readers.prefixes import split_prefixes

FIXTURES = Path(__file__).parents[1] / "fixtures"
# Real captures (each fixture folder's SOURCES.md names where it came from) holding device lines.
CAPTURES = sorted(
    path
    for folder in ("nccl_tests", "nccl_logs", "corpus2")
    for path in (FIXTURES / folder).rglob("*")
    if path.suffix in (".log", ".txt")
    and "fuzz_found" not in path.parts
    and re.search(r"#\s+Rank.* Pid ", path.read_text(encoding="utf-8", errors="replace"))
)
# pdsh's ``10.3.35.83: `` is no prefix the table reader peels (a host name and a colon could start any
# line), so there it reads no device; the attestation finds the line anywhere.
UNPEELED = {"corpus2/logs/ofi67_pdsh_prefix_ofi_p4d.log"}


def test_the_captures_are_found() -> None:
    assert len(CAPTURES) >= 30


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (  # nccl-tests 2.13+ (Group), nccl-tests' own README
            "#  Rank  0 Group  0 Pid   7774 on nc-d87e1263-head device  0 [0000:8f:00] NVIDIA H200",
            DeviceLine(0, 7774, "nc-d87e1263-head", 0, "0000:8f:00", "NVIDIA H200"),
        ),
        (  # older nccl-tests: no Group
            "#   Rank  3 Pid  17754 on ds-ml-01-0 device  3 [0x06] Tesla V100-SXM2-32GB",
            DeviceLine(3, 17754, "ds-ml-01-0", 3, "0x06", "Tesla V100-SXM2-32GB"),
        ),
        ("#  Rank  1 Group  0 Pid   7775 on h device  1 [0x1b]", DeviceLine(1, 7775, "h", 1, "0x1b", None)),
    ],
)
def test_a_device_line_reads_into_its_parts(line: str, expected: DeviceLine) -> None:
    assert parse_device_line(line) == expected
    assert parse_device_line(f"[1,0]<stdout>:{line}") is None
    assert parse_device_line(f"[1,0]<stdout>:{line}", behind_prefix=True) == expected


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_the_three_readers_read_a_capture_alike(path: Path) -> None:
    raw = path.read_text(encoding="utf-8", errors="replace").splitlines()
    on_raw = [d for line in raw if (d := parse_device_line(line, behind_prefix=True)) is not None]
    peeled = [d for line in raw if (d := parse_device(split_prefixes(line)[1])) is not None]
    assert on_raw, "no device line read"
    # The table reader, on the lines it peels, sees what the attestation sees on the raw lines.
    expected = [] if str(path.relative_to(FIXTURES)) in UNPEELED else on_raw
    assert peeled == [d.device() for d in expected]
    # The doctor's byte scan finds the same ranks.
    assert comm_members(path).get((None, 0), set()) == {d.rank for d in on_raw}
    # And the attestation records each of them on its host.
    ranks = {(r.rank, r.host, r.cuda_dev) for r in attest_files([path]).ranks if r.pid is not None}
    assert {(d.rank, d.host, d.index) for d in on_raw} <= ranks
