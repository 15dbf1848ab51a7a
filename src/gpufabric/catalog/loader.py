"""Load the YAML data shipped in ``catalog/data`` into immutable models, once per process.

Data files: ``aws.yaml``, ``gcp.yaml``, ``ib.yaml`` (instances), ``fabrics.yaml``, ``baselines.yaml``,
``node_labels.yaml``. Each file may hold a ``sources`` block of YAML anchors for provenance; only the
named list (``instances``, ``fabrics``, ``curves``, ``rules``) is read. A broken data file is a bug in the
package, reported as ``CatalogError`` naming the file and the entry.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from gpufabric.catalog.model import BaselineCurve, Fabric, InstanceType, NodeLabelRule
from gpufabric.catalog.names import FabricName
from gpufabric.errors import CatalogError, UsageError
from gpufabric.units import parse_size
from gpufabric.yaml_input import load_yaml

INSTANCE_FILES = ("aws.yaml", "gcp.yaml", "ib.yaml")
ModelT = TypeVar("ModelT", bound=BaseModel)


class CatalogData(BaseModel):
    """Everything the data files hold, validated."""

    instances: tuple[InstanceType, ...]
    fabrics: dict[FabricName, Fabric]
    curves: tuple[BaselineCurve, ...]
    rules: tuple[NodeLabelRule, ...]


def _read(file_name: str, key: str) -> list[dict[str, Any]]:
    text = resources.files("gpufabric.catalog").joinpath("data", file_name).read_text(encoding="utf-8")
    return entries_from_text(text, file_name, key)


def entries_from_text(text: str, file_name: str, key: str) -> list[dict[str, Any]]:
    """The mappings listed under ``key``; anything else is one ``CatalogError`` line with the line number."""
    try:
        document = load_yaml(text)  # yaml.safe_load, duplicate keys refused
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise CatalogError(f"catalog data {file_name}{where}: not valid YAML ({problem})") from exc
    except (ValueError, TypeError, OverflowError, RecursionError) as exc:
        # A value YAML's resolver types but cannot build: a date with month 13, a 5,000-digit integer.
        raise CatalogError(
            f"catalog data {file_name}: a YAML value cannot be converted ({str(exc)[:120]})"
        ) from None
    entries = document.get(key) if isinstance(document, dict) else None
    if not isinstance(entries, list):
        raise CatalogError(f"catalog data {file_name}: expected a list under '{key}'")
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise CatalogError(f"catalog data {file_name}: {key}[{index}] is not a mapping")
    return entries


def _build(model: type[ModelT], file_name: str, raw: dict[str, Any]) -> ModelT:
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        name = raw.get("name") or raw.get("id") or raw.get("provider") or "?"
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        message = " ".join(first["msg"].split())
        raise CatalogError(f"catalog data {file_name}: entry {name!r}: {where}: {message}") from exc


def _curve_fields(raw: dict[str, Any]) -> dict[str, Any]:
    """Sizes are written as the seeds print them ("1 KB"); the model wants bytes."""
    fields = dict(raw)
    points = raw.get("points", [])
    if not isinstance(points, list) or not all(isinstance(p, list) and len(p) == 2 for p in points):
        raise CatalogError(
            f"catalog data baselines.yaml: entry {raw.get('id')!r}: points: not [size, busbw] pairs"
        )
    try:
        fields["points"] = [
            {"size_bytes": parse_size(str(size), flag=f"baseline {raw.get('id')}"), "busbw_gbps": value}
            for size, value in points
        ]
        fields["small_size_limit_bytes"] = parse_size(str(fields.pop("small_size_limit", "1M")))
    except UsageError as exc:
        raise CatalogError(f"catalog data baselines.yaml: entry {raw.get('id')!r}: {exc}") from exc
    return fields


def parse_data_file(file_name: str, text: str) -> list[BaseModel]:
    """Validate one data file's text as ``load_catalog`` would (hostile-input tests feed it mutations)."""
    if file_name in INSTANCE_FILES:
        return [
            _build(InstanceType, file_name, raw) for raw in entries_from_text(text, file_name, "instances")
        ]
    if file_name == "fabrics.yaml":
        return [_build(Fabric, file_name, raw) for raw in entries_from_text(text, file_name, "fabrics")]
    if file_name == "baselines.yaml":
        entries = entries_from_text(text, file_name, "curves")
        return [_build(BaselineCurve, file_name, _curve_fields(raw)) for raw in entries]
    if file_name == "node_labels.yaml":
        return [_build(NodeLabelRule, file_name, raw) for raw in entries_from_text(text, file_name, "rules")]
    raise CatalogError(f"catalog data {file_name}: not a catalog file; expected one of {INSTANCE_FILES} ...")


@cache
def load_catalog() -> CatalogData:
    """Parse and validate every data file (cached: the data is immutable)."""
    instances = tuple(
        _build(InstanceType, name, raw) for name in INSTANCE_FILES for raw in _read(name, "instances")
    )
    seen: dict[str, str] = {}
    for inst in instances:
        for spelling in (inst.name, *inst.aliases):
            if spelling.lower() in seen:
                raise CatalogError(f"catalog data: {spelling!r} is defined twice ({seen[spelling.lower()]})")
            seen[spelling.lower()] = inst.name
    fabrics = {
        fabric.name: fabric
        for fabric in (_build(Fabric, "fabrics.yaml", raw) for raw in _read("fabrics.yaml", "fabrics"))
    }
    missing = set(FabricName) - set(fabrics)
    if missing:
        raise CatalogError(f"catalog data fabrics.yaml: no entry for {sorted(missing)}")
    curves = tuple(
        _build(BaselineCurve, "baselines.yaml", _curve_fields(raw))
        for raw in _read("baselines.yaml", "curves")
    )
    for curve in curves:
        if curve.instance.lower() not in seen:
            raise CatalogError(
                f"catalog data baselines.yaml: {curve.id} names unknown instance {curve.instance!r}"
            )
    rules = tuple(
        _build(NodeLabelRule, "node_labels.yaml", raw) for raw in _read("node_labels.yaml", "rules")
    )
    return CatalogData(instances=instances, fabrics=fabrics, curves=curves, rules=rules)
