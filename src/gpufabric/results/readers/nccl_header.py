"""The lines around an nccl-tests table that describe the run: settings, devices, versions, footer.

nccl-tests prints (exact spacing varies across versions, so every pattern here tolerates it):

    # nccl-tests version 2.17.1 nccl-headers=22703 nccl-library=22703
    # Collective test starting: all_reduce_perf
    # nThread 1 nGpus 1 minBytes 8 maxBytes 2147483648 step: 2(factor) warmup iters: 5 iters: 100 ...
    #  Rank  0 Group  0 Pid   7774 on nc-head device  0 [0000:8f:00] NVIDIA H200      (results/device_line)
    NCCL version 2.26.6+cuda12.8                       (results/nccl_version)
    # Out of bounds values : 0 OK                      (older versions: no leading '#')
    # Avg bus bandwidth    : 122.073

The table itself is read in ``nccl_text``; this module only recognises these lines.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from gpufabric.results.device_line import parse_device_line
from gpufabric.results.model import Device

_SETTING_PATTERNS: dict[str, re.Pattern[str]] = {
    "nthreads": re.compile(r"\bnThreads?\s+(\d+)"),
    "ngpus": re.compile(r"\bnGpus:?\s+(\d+)"),
    "min_bytes": re.compile(r"\bminBytes:?\s+(\d+)"),
    "max_bytes": re.compile(r"\bmaxBytes:?\s+(\d+)"),
    "step": re.compile(r"\bstep:\s*(\d+\((?:factor|bytes)\))"),
    "warmup_iters": re.compile(r"\bwarmup ?[iI]ters:\s*(\d+)"),
    "iters": re.compile(r"(?<![a-z] )\biters:\s*(\d+)"),
    "agg_iters": re.compile(r"\bagg iters:\s*(\d+)"),
    "validation": re.compile(r"\bvalidation:\s*(\d+)"),
    "graph": re.compile(r"\bgraph:\s*(\d+)"),
    "unalign": re.compile(r"\bunalign:\s*(\d+)"),
}
_SETTINGS_LINE = re.compile(r"^#\s*nThreads?\s+\d+\s+nGpus\s+\d+")
# NCCL's own ``comm 0x... rank 3 nranks 16 cudaDev 3 ... Init COMPLETE`` line: the true rank count, which
# the device lines of a big job (printed by some ranks, or cut when pasted) do not give.
_NRANKS = re.compile(r"\bnranks\s+(?P<nranks>\d{1,9})\b")
_TESTS_VERSION = re.compile(
    r"^#\s*nccl-tests version\s+(?P<version>\S+)(?:.*?nccl-library=(?P<library>\d{1,9})\b)?"
)
_TEST_STARTING = re.compile(r"^#\s*Collective test starting:\s*(?P<program>\S+)")
_TEST_CONCLUDED = re.compile(r"^#\s*Collective test concluded:\s*(?P<program>\S+)")
_OUT_OF_BOUNDS = re.compile(r"^#?\s*Out of bounds values\s*:\s*(?P<count>\d{1,18}\b|N/A)")
# gpufabric prints N/A when no row measured a bus bandwidth; nccl-tests prints nan or inf in odd cases.
_AVG_BUSBW = re.compile(
    r"^#?\s*Avg bus bandwidth\s*:\s*(?P<value>[-+0-9.eE]{1,64}|nan|inf|N/A)", re.IGNORECASE
)


@dataclass(frozen=True)
class Footer:
    """``# Out of bounds values`` (wrong_total) or ``# Avg bus bandwidth`` (avg_busbw, which ends a table)."""

    wrong_total: int | None = None
    avg_busbw: float | None = None  # None for "nan"/"inf": such a footer still ends the table
    ends_table: bool = False


def parse_settings(line: str) -> dict[str, int | str] | None:
    """The ``# nThread 1 nGpus 1 minBytes ...`` line as settings, or None for any other line."""
    if not _SETTINGS_LINE.match(line):
        return None
    return parse_settings_text(line)


def parse_settings_text(line: str) -> dict[str, int | str]:
    """The nccl-tests settings named anywhere in ``line`` (gpufabric's table title carries them too)."""
    settings: dict[str, int | str] = {}
    for name, pattern in _SETTING_PATTERNS.items():
        if match := pattern.search(line):
            value = match.group(1)
            # A number too long to be a setting (over 4,300 digits Python refuses to convert) stays text.
            settings[name] = int(value) if value.isdigit() and len(value) <= 18 else value
    return settings


def parse_device(line: str) -> Device | None:
    return parsed.device() if (parsed := parse_device_line(line)) is not None else None


def nccl_version_from_code(code: int) -> str:
    """NCCL's version code as ``ncclGetVersion`` returns it: 22703 -> 2.27.3, 2804 -> 2.8.4."""
    if code >= 10000:
        return f"{code // 10000}.{code // 100 % 100}.{code % 100}"
    return f"{code // 1000}.{code // 100 % 10}.{code % 100}"


def parse_tests_version(line: str) -> tuple[str, str | None] | None:
    """``# nccl-tests version 2.17.1 ... nccl-library=22703`` -> ("2.17.1", "2.27.3")."""
    if not (match := _TESTS_VERSION.match(line)):
        return None
    library = match["library"]
    return match["version"], nccl_version_from_code(int(library)) if library else None


def parse_nranks(line: str) -> int | None:
    """``NCCL INFO comm 0x5 rank 3 nranks 16 cudaDev 3 ... - Init COMPLETE`` -> 16."""
    match = _NRANKS.search(line)
    return int(match["nranks"]) if match and int(match["nranks"]) > 0 else None


def parse_test_boundary(line: str) -> tuple[str, str] | None:
    """``# Collective test starting: all_reduce_perf`` -> ("starting", "all_reduce_perf")."""
    if match := _TEST_STARTING.match(line):
        return "starting", match["program"]
    if match := _TEST_CONCLUDED.match(line):
        return "concluded", match["program"]
    return None


def parse_footer(line: str) -> Footer | None:
    if match := _OUT_OF_BOUNDS.match(line):
        return Footer(wrong_total=None if match["count"] == "N/A" else int(match["count"]))
    if match := _AVG_BUSBW.match(line):
        if match["value"] == "N/A":
            return Footer(ends_table=True)
        try:
            value = float(match["value"])
        except ValueError:
            return None
        return Footer(avg_busbw=value if math.isfinite(value) and value >= 0 else None, ends_table=True)
    return None
