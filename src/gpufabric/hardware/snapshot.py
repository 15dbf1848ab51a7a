"""``NodeSnapshot``: one node as captured, raw facts and the ``NodeShape`` built from them, as a versioned
JSON document (``gpufabric snapshot --out FILE``) that doctor, certify and tests read offline
(``load_snapshot``).

Detection itself lives in ``hardware.detect``; this module is the document and its file.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gpufabric.errors import InputError
from gpufabric.hardware.cloud import CloudIdentity
from gpufabric.hardware.nvlink import NvLinkRecord
from gpufabric.hardware.shape import GpuFacts, NicFacts, NodeShape

SNAPSHOT_VERSION = 1
SNAPSHOT_KIND = "gpufabric-node-snapshot"


class NodeSnapshot(BaseModel):
    """What one node is, as read from the node at ``captured_at``: the raw answers and the shape."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["gpufabric-node-snapshot"] = "gpufabric-node-snapshot"
    schema_version: int = SNAPSHOT_VERSION
    captured_at: datetime
    hostname: str | None = None
    gpufabric_version: str | None = None
    driver_version: str | None = None
    gpus: list[GpuFacts] = Field(default_factory=list, description="NVML's answers, one per GPU")
    nvlinks: list[NvLinkRecord] = Field(default_factory=list, description="every NVLink NVML reported")
    topology: str | None = Field(default=None, description="nvidia-smi topo -m, verbatim")
    nics: list[NicFacts] = Field(default_factory=list, description="every RDMA port and netdev in sysfs")
    cloud: CloudIdentity = CloudIdentity()
    shape: NodeShape
    notes: list[str] = Field(default_factory=list, description="what could not be read, and why")


def load_snapshot(path: Path) -> NodeSnapshot:
    """A snapshot file, its shape marked ``source="snapshot"``; any problem is one ``InputError`` line."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"{path}: cannot read the snapshot ({exc.strerror or exc})") from exc
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{path}: not text (byte {exc.start} is not UTF-8); "
            "write a snapshot with `gpufabric snapshot --out FILE`"
        ) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{path}: not JSON (line {exc.lineno}: {exc.msg}); write one with `gpufabric snapshot --out FILE`"
        ) from exc
    if not isinstance(data, dict) or data.get("kind") != SNAPSHOT_KIND:
        raise InputError(
            f'{path}: not a node snapshot (no "kind": "{SNAPSHOT_KIND}"); write one with '
            "`gpufabric snapshot --out FILE`"
        )
    version = data.get("schema_version")
    if version != SNAPSHOT_VERSION:
        raise InputError(
            f"{path}: snapshot schema_version {version!r}, this gpufabric reads {SNAPSHOT_VERSION}; "
            "capture it again with this version's `gpufabric snapshot`"
        )
    try:
        snapshot = NodeSnapshot.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        raise InputError(f"{path}: invalid snapshot at {where}: {first['msg']}") from exc
    return snapshot.model_copy(update={"shape": snapshot.shape.model_copy(update={"source": "snapshot"})})


def save_snapshot(snapshot: NodeSnapshot, path: Path) -> None:
    """Write ``snapshot`` as indented JSON (the directory must exist), whole or not at all (a full disk
    leaves no empty file: ``outputs.atomic_write_text``)."""
    from gpufabric.outputs import atomic_write_text

    atomic_write_text(path, snapshot.model_dump_json(indent=2) + "\n")
