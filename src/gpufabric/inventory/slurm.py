"""Slurm nodes from ``scontrol show nodes --oneliner``: GRES (gpu and any fabric GRES), state, partitions.

``scontrol`` prints ``Key=Value`` pairs, but some values contain spaces (``OS=Linux 6.1.0 #1 SMP ...``,
``Reason=Not responding [slurm@...]``), so a pair ends where the next ``Key=`` begins, not at the next
space. Slurm 22.05 (Debian's) has no ``--json`` for scontrol, so this text is the portable interface.
``Gres=`` entries look like ``gpu:h100:8(S:0-1)``, ``gpu:4`` or ``efa:2`` (name[:type][:count][(sockets)]).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Mapping

from gpufabric.errors import GpufabricError, UsageError
from gpufabric.inventory.model import NodeInfo

KEY = re.compile(r"(?:^|(?<=\s))([A-Za-z][A-Za-z0-9_]*)=")
GPU_GRES = "gpu"
UNITS = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}
# Base states (before any +FLAG) in which a node runs nothing new.
UNAVAILABLE_STATES = (
    "DOWN",
    "DRAIN",
    "DRAINED",
    "DRAINING",
    "FAIL",
    "FAILING",
    "FUTURE",
    "INVAL",
    "NOT_RESPONDING",
)


def parse_pairs(line: str) -> dict[str, str]:
    """One ``--oneliner`` node line as a dict; a value runs until the next ``Key=``."""
    matches = list(KEY.finditer(line))
    pairs: dict[str, str] = {}
    for here, after in zip(matches, [*matches[1:], None], strict=True):
        end = after.start() if after else len(line)
        pairs[here.group(1)] = line[here.end() : end].strip()
    return pairs


def _split_top_level(text: str) -> list[str]:
    """Split on commas that are not inside parentheses: ``gpu:h100:8(S:0,1),efa:4``."""
    parts, depth, current = [], 0, ""
    for char in text:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    return [p.strip() for p in parts if p.strip()]


def parse_gres(text: str) -> list[tuple[str, str | None, int]]:
    """``gpu:h100:8(S:0-1),efa:2`` -> ``[("gpu", "h100", 8), ("efa", None, 2)]``; ``(null)`` -> []."""
    entries: list[tuple[str, str | None, int]] = []
    if not text or text == "(null)":
        return entries
    for item in _split_top_level(text):
        fields = item.split("(", 1)[0].split(":")
        name, rest = fields[0], fields[1:]
        count, kind = 1, None
        if rest and (number := re.fullmatch(r"(\d+)([KMGT]?)", rest[-1])):
            count = int(number.group(1)) * UNITS[number.group(2)]
            rest = rest[:-1]
        if rest:
            kind = ":".join(rest)
        entries.append((name, kind, count))
    return entries


def _int(value: str | None) -> int | None:
    return int(value) if value and value.isdigit() else None


def node_from_pairs(pairs: Mapping[str, str]) -> NodeInfo:
    """One Slurm node as ``NodeInfo``: GPUs and their type from GRES, every other GRES as fabric."""
    gres = parse_gres(pairs.get("Gres", ""))
    gpus = [(kind, count) for name, kind, count in gres if name == GPU_GRES]
    fabric: dict[str, int] = {}
    for name, _kind, count in gres:
        if name != GPU_GRES:
            fabric[name] = fabric.get(name, 0) + count
    state = pairs.get("State", "")
    base = state.split("+")[0].rstrip("*~#!%$@^-")
    flags = state.split("+")[1:]
    unavailable = base in UNAVAILABLE_STATES or any(f in UNAVAILABLE_STATES for f in flags)
    features = [f for f in pairs.get("AvailableFeatures", "").split(",") if f and f != "(null)"]
    partitions = [p for p in pairs.get("Partitions", "").split(",") if p and p != "(null)"]
    gpu_types = sorted({kind for kind, _ in gpus if kind})
    total_gpus = sum(count for _, count in gpus) if gpus else None
    return NodeInfo(
        name=pairs.get("NodeName", "?"),
        source="slurm",
        instance_type=None,
        node_pool=partitions[0] if partitions else None,
        gpu_type=",".join(gpu_types) or None,
        gpu_resource="gres/gpu" if gpus else None,
        gpu_allocatable=total_gpus,
        gpu_capacity=total_gpus,
        fabric_resources=fabric,
        cpus=_int(pairs.get("CPUTot")),
        memory_mb=_int(pairs.get("RealMemory")),
        ready=not unavailable,
        schedulable=not unavailable,
        state=state or None,
        partitions=partitions,
        features=features,
    )


def parse_scontrol_nodes(text: str) -> list[NodeInfo]:
    """Every node of ``scontrol show nodes --oneliner`` output (one line each; blank lines ignored)."""
    return [node_from_pairs(parse_pairs(line)) for line in text.splitlines() if "NodeName=" in line]


def list_slurm_nodes(environ: Mapping[str, str] | None = None, timeout_s: float = 30.0) -> list[NodeInfo]:
    """Run ``scontrol show nodes --oneliner`` against the cluster ``environ`` points at (SLURM_CONF)."""
    env = dict(os.environ if environ is None else environ)
    scontrol = shutil.which("scontrol", path=env.get("PATH"))
    if scontrol is None:
        raise UsageError(
            "--on slurm: scontrol is not on PATH; run on a Slurm login node or install the Slurm client "
            "(Debian/Ubuntu: apt-get install slurm-client)"
        )
    argv = [scontrol, "show", "nodes", "--oneliner"]
    try:
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired as exc:
        raise GpufabricError(
            f"`scontrol show nodes` did not answer within {timeout_s:.0f}s: "
            "is slurmctld up? (`scontrol ping`)"
        ) from exc
    if done.returncode != 0:
        detail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise GpufabricError(
            f"`scontrol show nodes` failed (exit {done.returncode}): {detail}; check that slurmctld is up "
            "(`scontrol ping`) and that SLURM_CONF points at this cluster's slurm.conf"
        )
    return parse_scontrol_nodes(done.stdout)
