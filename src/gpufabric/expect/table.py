"""``ExpectationTable``: the document ``gpufabric expect`` renders: one shape, one node count, one
``Expectation`` per collective. ``load_shape`` reads a shape from a file (a node snapshot, a JSON
``NodeShape``, or a document that holds one under ``shape``); ``detected_shape`` reads this node.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path as FilePath
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from gpufabric.collectives import CollectiveName
from gpufabric.errors import InputError
from gpufabric.expect.conditions import Transport
from gpufabric.expect.model import Expectation, expect
from gpufabric.hardware import NodeShape, detect_node, load_snapshot
from gpufabric.hardware.snapshot import SNAPSHOT_KIND


class ExpectationTable(BaseModel):
    """What each collective should reach on ``nodes`` nodes of ``shape``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    shape: NodeShape
    shape_from: str
    nodes: int
    hosts: int
    size_bytes: int | None
    transport: Transport
    rows: tuple[Expectation, ...]

    @property
    def missing(self) -> list[str]:
        """Every fact some row could not know, once."""
        return list(dict.fromkeys(m for row in self.rows for m in row.missing))


def expectation_table(
    shape: NodeShape,
    collectives: Sequence[CollectiveName],
    nodes: int,
    *,
    shape_from: str,
    size_bytes: int | None = None,
    hosts: int | None = None,
    ranks_per_node: int | None = None,
    transport: Transport = "auto",
) -> ExpectationTable:
    """One ``Expectation`` per collective, same shape, nodes and size."""
    rows = tuple(
        expect(shape, c, nodes, size_bytes, ranks_per_node=ranks_per_node, hosts=hosts, transport=transport)
        for c in collectives
    )
    return ExpectationTable(
        shape=shape,
        shape_from=shape_from,
        nodes=nodes,
        hosts=hosts or nodes,
        size_bytes=size_bytes,
        transport=transport,
        rows=rows,
    )


def no_gpu_read(shape: NodeShape) -> str | None:
    """Why no GPU fact is in ``shape`` (its detection note, when it has one), or None when it has GPUs:
    without them no path, ceiling or band can be known, whatever else the shape says."""
    if shape.gpus or shape.gpu_count or shape.gpu_model:
        return None
    why = next((note.removeprefix("GPUs: ") for note in shape.notes if note.startswith("GPUs:")), None)
    return why or "the shape lists no GPU"


def _shape_of(document: Any, where: str) -> NodeShape:
    candidate = document.get("shape", document) if isinstance(document, dict) else document
    try:
        return NodeShape.model_validate(candidate)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "shape"
        raise InputError(
            f"--snapshot {where}: not a node shape ({field}: {' '.join(first['msg'].split())}); give a "
            "snapshot (`gpufabric snapshot --out FILE`), a JSON NodeShape, or a document with a 'shape' field"
        ) from None


def load_shape(path: FilePath) -> NodeShape:
    """A shape from ``path``: a node snapshot through the hardware package's ``load_snapshot`` (strict:
    kind and schema version), else any JSON document that is a ``NodeShape`` or holds one under
    ``shape`` (a hand-written or older file)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(
            f"--snapshot {path}: cannot read it ({exc.strerror or exc}); give a snapshot JSON file"
        ) from None
    except UnicodeDecodeError as exc:
        raise InputError(
            f"--snapshot {path}: not text (byte {exc.start} is not UTF-8); give a snapshot JSON file "
            "(`gpufabric snapshot --out FILE`)"
        ) from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"--snapshot {path}: not JSON (line {exc.lineno}: {exc.msg})") from None
    if isinstance(document, dict) and document.get("kind") == SNAPSHOT_KIND:
        return load_snapshot(path).shape
    return _shape_of(document, str(path))


def detected_shape(environ: Mapping[str, str]) -> NodeShape:
    """This node's shape, read by ``hardware.detect_node`` (the cloud's metadata service asked briefly,
    unless GPUFABRIC_NO_METADATA is set)."""
    return detect_node(environ=environ).shape
