"""RAS's JSON report (``SET FORMAT json``, NCCL 2.28.7 and newer) as a ``RasStatus``.

The fields are those NCCL's ``src/ras/client_support.cc`` writes (``jsonWriteHeader``,
``jsonStartCommunicator``, ``jsonWriteRankData``, ``jsonWriteMissingRank``, ``jsonWriteFooter``) and its
user guide documents (troubleshooting/ras.rst, "JSON Output"). RAS leaves the analysis to the reader, so
the MISMATCH groups the text report prints are computed here the same way: ranks grouped by each
collective's launched-operation count.

NCCL 2.28.7 and 2.28.9 write a missing rank's ``"nvml_dev": N`` without the comma before its ``"status"``
(``jsonWriteMissingRank``, client_support.cc line 1963 at tag v2.28.9-1; fixed by 2.29.2): exactly the
report of a hung job is then not JSON. ``repair_missing_rank_comma`` adds that one comma, nothing else.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

from gpufabric.errors import InputError
from gpufabric.nccl_native.ras_model import (
    Mismatch,
    MissingRank,
    OutlierGroup,
    RasCommunicator,
    RasRank,
    RasStatus,
)

_MISSING_COMMA = re.compile(r'("nvml_dev": -?\d+)(\s*\n\s*"status")')


def repair_missing_rank_comma(text: str) -> str:
    """``text`` with NCCL 2.28.x's one missing comma restored (see the module's docstring)."""
    return _MISSING_COMMA.sub(r"\1,\2", text)


def _rank(entry: dict[str, Any]) -> dict[str, Any]:
    host = entry.get("host")
    pid = entry.get("pid")
    return {
        "rank": int(entry["rank"]),
        "host": None if host in (None, "unknown") else str(host),
        "pid": None if pid in (None, -1) else int(pid),
        "cuda_dev": entry.get("cuda_dev"),
        "nvml_dev": entry.get("nvml_dev"),
    }


def _missing(entry: dict[str, Any]) -> MissingRank:
    status = entry.get("status") or {}
    if status.get("considered_dead"):
        return MissingRank(**_rank(entry), state="dead")
    return MissingRank(**_rank(entry), state="unresponsive" if status.get("unresponsive") else "missing")


def _count_mismatches(ranks: list[dict[str, Any]]) -> list[Mismatch]:
    """Per collective, the ranks grouped by launched-operation count, where the counts differ."""
    mismatches: list[Mismatch] = []
    names = sorted({name for r in ranks for name in (r.get("collective_counts") or {})})
    for name in names:
        counts = {int(r["rank"]): int((r.get("collective_counts") or {}).get(name, 0)) for r in ranks}
        tally = Counter(counts.values())
        if len(tally) < 2:
            continue
        by_rank = {int(r["rank"]): r for r in ranks}
        groups = [
            OutlierGroup(
                count=n,
                value=str(value),
                ranks=[RasRank(**_rank(by_rank[k])) for k, v in sorted(counts.items()) if v == value],
            )
            for value, n in sorted(tally.items(), key=lambda item: (-item[1], item[0]))
        ]
        mismatches.append(Mismatch(what=f"{name} operation counts", groups=groups))
    return mismatches


def _errors(entry: dict[str, Any]) -> list[str]:
    errors: list[str] = []
    for r in entry.get("ranks") or []:
        status = r.get("status") or {}
        init, asynchronous = status.get("init_state", 0), status.get("async_error", 0)
        if init not in (0, 7):  # ncclSuccess, ncclInProgress (ras.rst: "any other value indicates an error")
            errors.append(f"rank {r['rank']}: initialization error {init}")
        if asynchronous not in (0, 7):
            errors.append(f"rank {r['rank']}: asynchronous error {asynchronous}")
        if status.get("abort_flag"):
            errors.append(f"rank {r['rank']}: aborted")
    return errors


def _communicator(entry: dict[str, Any]) -> RasCommunicator:
    ranks = list(entry.get("ranks") or [])
    missing = [_missing(m) for m in entry.get("missing_ranks") or []]
    mismatches = _count_mismatches(ranks)
    rank_errors = _errors(entry)
    errors = [
        name
        for name, present in (("INCOMPLETE", missing), ("ERROR", rank_errors), ("MISMATCH", mismatches))
        if present
    ]
    return RasCommunicator(
        hash=str(entry.get("hash", "")).removeprefix("0x").rjust(16, "0"),
        size=entry.get("size"),
        ranks_reporting=entry.get("ranks_count", len(ranks)),
        errors=errors or ["OK"],
        ranks=[RasRank(**_rank(r)) for r in ranks],
        missing=missing,
        mismatches=mismatches,
        rank_errors=rank_errors,
    )


def parse_ras_json(text: str, *, address: str) -> RasStatus:
    """The RAS JSON report ``text`` (queried at ``address``) as a ``RasStatus``; ``InputError`` when it is
    not RAS's JSON even after the 2.28.x repair."""
    notes: list[str] = []
    repaired = repair_missing_rank_comma(text)
    if repaired != text:
        notes.append("RAS's JSON lacked a comma after a missing rank's nvml_dev (NCCL 2.28.x); restored")
    try:
        data = json.loads(repaired)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"RAS at {address}: the JSON report does not parse ({exc.msg}, line {exc.lineno}); rerun with "
            "--raw-format text"
        ) from exc
    if not isinstance(data, dict) or "communicators" not in data:
        raise InputError(f"RAS at {address}: the JSON report has no 'communicators'; not a RAS status")
    ras = data.get("ras") or {}
    communicators = [_communicator(c) for c in data.get("communicators") or []]
    dead = {(r.host, r.pid) for c in communicators for r in c.missing if r.state == "dead"}
    return RasStatus(
        address=address,
        format="json",
        nccl_version=data.get("nccl_version"),
        cuda_runtime=data.get("cuda_runtime_version"),
        cuda_driver=data.get("cuda_driver_version"),
        communicators=communicators,
        dead_process_count=len(dead),
        timeouts=int(ras.get("timeouts_count", 0)),
        collection_seconds=ras.get("collection_time_sec"),
        notes=notes,
        raw=text,
    )
