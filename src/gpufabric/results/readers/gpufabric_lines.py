"""The ``#`` lines gpufabric prints around its own nccl-tests-shaped tables, read back.

``report.nccl_table.render_table`` (what ``bench`` and ``show`` print) writes, per collective:

    # gpufabric 0.1.0 all_reduce: 2 ranks, backend gloo, minBytes 8 maxBytes 64 step: 8(factor) ...
    #  Rank   0 on         vm device  - [-] cpu
    # NCCL version 2.21.5, torch 2.13.0+cpu, CUDA 12.1

and after the last table ``# note: ...`` lines, ``# INCOMPLETE: <why>`` for a run that stopped early,
and, around everything, ``# fault injected: GPUFABRIC_FAULT=...`` for a run measured under a fault.
A run that was itself read from nccl-tests output says ``# nccl-tests <version> <collective>: ...``.

Each function here recognises one kind of line and returns what it says, or None for any other line.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass, field

from gpufabric.boundary_names import FAULT_ENV
from gpufabric.results.model import Device
from gpufabric.results.readers.collective_names import KNOWN_PROGRAMS
from gpufabric.results.readers.nccl_header import parse_settings_text

_NAMES = "|".join(sorted((*KNOWN_PROGRAMS, "unknown"), key=len, reverse=True))
_TITLE = re.compile(
    r"^#\s(?P<engine>gpufabric|nccl-tests)(?:\s(?P<version>\S{1,64}))?\s(?P<name>" + _NAMES + r")"
    r"(?:#\d{1,9})?(?P<inferred>\? \(inferred\))?(?::\s(?P<facts>.*))?$"
)
_RANKS = re.compile(r"^(?P<nranks>\d{1,9}) ranks\b")
_BACKEND = re.compile(r"\bbackend (?P<backend>[\w.-]{1,64})\b")
_PRECISION = re.compile(
    r"\badaptive: precision (?P<precision>\S{1,64}) budget (?P<budget>[0-9.eE+-]{1,64})s\b"
)
_BATCHES = re.compile(r"\bbatches: (?P<batches>\d{1,18})\b")
_DEVICE = re.compile(
    r"^#\s{1,4}Rank\s+(?P<rank>\d{1,9}|-) on\s+(?P<host>\S+) device\s+(?P<index>\d{1,9}|-) "
    r"\[(?P<bus>[^\]]*)\](?P<name>.*)$"
)
_VERSIONS = re.compile(r"^# (?:NCCL version|torch|CUDA) \S")
_VERSION_ITEM = re.compile(r"^(?P<what>NCCL version|torch|CUDA) (?P<value>\S{1,128})$")
_NOTE = "# note: "
_INCOMPLETE = "# INCOMPLETE: "
_FAULT = re.compile(rf"^# fault injected: {FAULT_ENV}=(?P<spec>.*) \(a test run, not a real measurement\)$")


@dataclass(frozen=True)
class Title:
    """The first line of one of our tables."""

    engine: str
    version: str | None
    collective: str
    inferred: bool
    nranks: int | None
    backend: str | None
    settings: dict[str, int | str | float] = field(default_factory=dict)


def parse_title(line: str) -> Title | None:
    if not line.startswith(("# gpufabric ", "# nccl-tests ")) or not (match := _TITLE.match(line)):
        return None
    facts = match["facts"] or ""
    ranks = _RANKS.match(facts)
    backend = _BACKEND.search(facts)
    settings: dict[str, int | str | float] = dict(parse_settings_text(facts))
    if adaptive := _PRECISION.search(facts):
        settings["mode"] = "adaptive"
        settings["precision"] = adaptive["precision"]
        with contextlib.suppress(ValueError):
            settings["budget_s"] = float(adaptive["budget"])
    if batches := _BATCHES.search(facts):
        settings["batches"] = int(batches["batches"])
    return Title(
        engine=match["engine"],
        version=match["version"],
        collective=match["name"],
        inferred=match["inferred"] is not None,
        nranks=int(ranks["nranks"]) or None if ranks else None,
        backend=backend["backend"] if backend else None,
        settings=settings,
    )


def parse_device(line: str) -> Device | None:
    """``#  Rank   0 on         vm device  - [-] cpu`` (``-`` and ``?`` stand for "not known")."""
    if not (match := _DEVICE.match(line)):
        return None
    return Device(
        rank=None if match["rank"] == "-" else int(match["rank"]),
        host=None if match["host"] == "?" else match["host"],
        index=None if match["index"] == "-" else int(match["index"]),
        bus_id=None if match["bus"] == "-" else match["bus"],
        name=match["name"].strip() or None,
    )


def parse_versions(line: str) -> dict[str, str] | None:
    """``# NCCL version 2.21.5, torch 2.13.0+cpu, CUDA 12.1`` -> {"nccl": ..., "torch": ..., "cuda": ...}."""
    if not _VERSIONS.match(line):
        return None
    found: dict[str, str] = {}
    for item in line[2:].split(", "):
        if not (match := _VERSION_ITEM.match(item.strip())):
            return None
        found[{"NCCL version": "nccl", "torch": "torch", "CUDA": "cuda"}[match["what"]]] = match["value"]
    return found


def parse_note(line: str) -> str | None:
    return line[len(_NOTE) :] if line.startswith(_NOTE) else None


def parse_incomplete(line: str) -> str | None:
    return line[len(_INCOMPLETE) :] if line.startswith(_INCOMPLETE) else None


def parse_fault(line: str) -> str | None:
    match = _FAULT.match(line) if line.startswith("# fault injected") else None
    return match["spec"] if match else None
