"""NCCL's Inspector profiler plugin's output, read back: per collective and message size, each rank's
time and bus bandwidth over the job, and the ranks and collectives that stand out.

The plugin (NCCL's ``plugins/profiler/inspector``, ``ext-profiler/inspector`` up to 2.28) writes either
JSON, one object per completed operation, each ``{"header": {id, rank, n_ranks, nnodes}, "metadata":
{hostname, pid, ...}, "coll_perf": {coll, coll_sn, coll_msg_size_bytes, coll_exec_time_us, coll_algobw_gbs,
coll_busbw_gbs}}`` followed by a newline, into ``<dump dir>/<host>-pid<pid>.log`` (inspector.cc at tag
v2.28.9-1, inspector_json.cc at v2.30.7-1, ``p2p_perf`` objects for send/recv since 2.29), or with
``NCCL_INSPECTOR_PROM_DUMP=1`` Prometheus text (``nccl_bus_bandwidth_gbs{...} v`` and
``nccl_collective_exec_time_microseconds{...} v``, labelled by node, gpu, collective and a message-size
bucket, inspector_prom.cc) into ``nccl_inspector_metrics_<gpu uuid>.prom``. Both are read here.

Why "stands out" and not "slow": in a collective every rank waits for the last one, so the rank that
arrives late shows the *shortest* kernel time and its peers the longest. A rank far from its peers'
median in either direction is named, with the direction, and left for ``isolate`` to prove.
"""

from __future__ import annotations

import json
import re
import statistics
from collections import defaultdict
from fnmatch import fnmatch
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from gpufabric.errors import InputError

OUTLIER_RATIO = 1.25  # a rank's median time this far (either way) from its peers' median is named
_PROM = re.compile(r"^(?P<metric>nccl_[a-z0-9_]+)\{(?P<labels>[^}]*)\}\s+(?P<value>\S+)\s*$")
_LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')
_TIME_METRICS = ("nccl_collective_exec_time_microseconds", "nccl_p2p_exec_time_microseconds")
_BW_METRICS = ("nccl_bus_bandwidth_gbs", "nccl_p2p_bus_bandwidth_gbs")


class InspectorSample(BaseModel):
    """One operation on one rank (JSON), or one exported value pair (Prometheus)."""

    model_config = ConfigDict(extra="forbid")

    rank: str = Field(description="'rank N' (JSON) or 'node/GPUn' (Prometheus, which has no rank)")
    host: str
    collective: str
    size: str = Field(description="bytes (JSON) or the plugin's size bucket, e.g. '4-5GB' (Prometheus)")
    time_us: float
    busbw_gbps: float
    comm: str = ""


class RankCell(BaseModel):
    model_config = ConfigDict(extra="forbid")

    rank: str
    host: str
    count: int
    median_time_us: float
    median_busbw_gbps: float


class InspectorRow(BaseModel):
    """One collective at one size: every rank's medians, and the ones far from their peers."""

    model_config = ConfigDict(extra="forbid")

    collective: str
    size: str
    ranks: list[RankCell]
    median_time_us: float
    median_busbw_gbps: float
    outliers: list[str] = Field(default_factory=list)


class InspectorSummary(BaseModel):
    """An Inspector dump, summarised."""

    model_config = ConfigDict(extra="forbid")

    sources: list[str]
    format: str
    samples: int
    rows: list[InspectorRow]

    def findings(self) -> list[str]:
        return [f"{row.collective} {row.size}: {o}" for row in self.rows for o in row.outliers]


def _json_samples(text: str, source: str) -> list[InspectorSample]:
    decoder = json.JSONDecoder()
    samples: list[InspectorSample] = []
    at = 0
    while (at := _skip_space(text, at)) < len(text):
        try:
            obj, at = decoder.raw_decode(text, at)
        except json.JSONDecodeError as exc:
            if text[at:].strip() and at + len(text[at:].rstrip()) == len(text.rstrip()) and samples:
                break  # a dump cut mid-object (the job was killed while writing): keep what was whole
            raise InputError(f"{source}: not Inspector JSON at character {at} ({exc.msg})") from exc
        header, meta = obj.get("header") or {}, obj.get("metadata") or {}
        perf, prefix = (obj["coll_perf"], "coll") if "coll_perf" in obj else (obj.get("p2p_perf"), "p2p")
        if not isinstance(perf, dict):
            continue
        samples.append(
            InspectorSample(
                rank=f"rank {header.get('rank', '?')}",
                host=str(meta.get("hostname", "?")),
                collective=str(perf.get(prefix, "?")),
                size=str(perf.get(f"{prefix}_msg_size_bytes", "?")),
                time_us=float(perf.get(f"{prefix}_exec_time_us", 0.0)),
                busbw_gbps=float(perf.get(f"{prefix}_busbw_gbs", 0.0)),
                comm=str(header.get("id", "")),
            )
        )
    return samples


def _skip_space(text: str, at: int) -> int:
    while at < len(text) and text[at].isspace():
        at += 1
    return at


def _prom_samples(text: str) -> list[InspectorSample]:
    pairs: dict[tuple[str, ...], dict[str, float]] = defaultdict(dict)
    for line in text.splitlines():
        if not (m := _PROM.match(line)):
            continue
        labels = dict(_LABEL.findall(m["labels"]))
        kind = "time" if m["metric"] in _TIME_METRICS else "bw" if m["metric"] in _BW_METRICS else None
        if kind is None:
            continue
        key = (
            labels.get("node", "?"), labels.get("gpu", "?"), labels.get("comm_name", ""),
            labels.get("collective") or labels.get("p2p_operation", "?"), labels.get("message_size", "?"),
        )  # fmt: skip
        pairs[key][kind] = float(m["value"])
    return [
        InspectorSample(
            rank=f"{node}/{gpu}",
            host=node,
            comm=comm,
            collective=coll,
            size=size,
            time_us=values.get("time", 0.0),
            busbw_gbps=values.get("bw", 0.0),
        )
        for (node, gpu, comm, coll, size), values in pairs.items()
    ]


def _row(collective: str, size: str, samples: list[InspectorSample]) -> InspectorRow:
    by_rank: dict[str, list[InspectorSample]] = defaultdict(list)
    for s in samples:
        by_rank[s.rank].append(s)
    cells = [
        RankCell(
            rank=rank,
            host=group[0].host,
            count=len(group),
            median_time_us=statistics.median(s.time_us for s in group),
            median_busbw_gbps=statistics.median(s.busbw_gbps for s in group),
        )
        for rank, group in sorted(by_rank.items())
    ]
    middle = statistics.median(c.median_time_us for c in cells)
    outliers = []
    if len(cells) > 2 and middle > 0:
        for cell in cells:
            ratio = cell.median_time_us / middle
            if ratio >= OUTLIER_RATIO or ratio <= 1 / OUTLIER_RATIO:
                way = (
                    "longer (waits for a peer, or is slow itself)" if ratio > 1 else "shorter (arrives late?)"
                )
                outliers.append(f"{cell.rank} on {cell.host}: {ratio:.2f}x the ranks' median time, {way}")
    return InspectorRow(
        collective=collective, size=size, ranks=cells, median_time_us=middle,
        median_busbw_gbps=statistics.median(c.median_busbw_gbps for c in cells), outliers=outliers,
    )  # fmt: skip


def inspector_files(path: Path) -> list[Path]:
    """The Inspector outputs at ``path``: the file itself when so named, or a directory's ``*-pid*.log``
    and ``*.prom`` (searched one level down too, as ``NCCL_INSPECTOR_DUMP_DIR`` holds per-job folders)."""
    patterns = ("*-pid*.log", "*.prom")
    if path.is_file():
        return [path] if any(fnmatch(path.name, pattern) for pattern in patterns) else []
    return sorted({p for pattern in patterns for p in (*path.glob(pattern), *path.glob(f"*/{pattern}"))})


def read_inspector(paths: list[Path]) -> InspectorSummary:
    """The Inspector outputs at ``paths`` (files or directories) summarised; ``InputError`` when none is
    there or one is not the plugin's."""
    files = [f for p in paths for f in inspector_files(p)]
    if not files:
        raise InputError(
            f"{', '.join(map(str, paths))}: no Inspector output (<host>-pid<pid>.log or "
            "nccl_inspector_metrics_*.prom); set NCCL_INSPECTOR_ENABLE=1 and NCCL_INSPECTOR_DUMP_DIR"
        )
    samples: list[InspectorSample] = []
    kinds = set()
    for file in files:
        text = file.read_text(encoding="utf-8", errors="replace")
        prom = file.suffix == ".prom"
        kinds.add("prometheus" if prom else "json")
        samples.extend(_prom_samples(text) if prom else _json_samples(text, str(file)))
    if not samples:  # a file named like the plugin's output that holds none of its records
        raise InputError(
            f"{', '.join(map(str, files))}: no Inspector record in it (named like the plugin's output, but "
            "not its JSON lines or Prometheus metrics, or the job ran no collective); give the files of "
            "NCCL_INSPECTOR_DUMP_DIR"
        )
    grouped: dict[tuple[str, str], list[InspectorSample]] = defaultdict(list)
    for s in samples:
        grouped[(s.collective, s.size)].append(s)
    rows = [
        _row(coll, size, group)
        for (coll, size), group in sorted(grouped.items(), key=lambda kv: (kv[0][0], _size_key(kv[0][1])))
    ]
    return InspectorSummary(
        sources=[str(f) for f in files], format="+".join(sorted(kinds)), samples=len(samples), rows=rows
    )


def _size_key(size: str) -> tuple[int, str]:
    return (int(size), "") if size.isdigit() else (1 << 62, size)
