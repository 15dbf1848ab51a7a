"""Plain-text building blocks of the catalog and plan renderers: pipe tables (stable, greppable,
diff-able) and YAML/JSON dumps whose sources are named as users know them (``catalog.public_data``)."""

from __future__ import annotations

import json
from typing import Any

import yaml

from gpufabric.catalog import public_data
from gpufabric.report.formats import Format

# libyaml's emitter when PyYAML was built with it: the pure-Python one takes seconds on a big plan.
_YAML_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def dump_public(data: Any, fmt: Format) -> str:
    """``data`` (a dumped model) as ``json`` or YAML, public guides by name, never the file names the
    catalog keeps them under."""
    data = public_data(data)
    if Format(fmt) is Format.JSON:
        return json.dumps(data, indent=2, sort_keys=False) + "\n"
    return yaml.dump(data, Dumper=_YAML_DUMPER, sort_keys=False, width=120)


def pipe_table(header: list[str], rows: list[list[str]]) -> str:
    """A markdown pipe table, each column as wide as its widest cell."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

    return (
        "\n".join([line(header), "|" + "|".join("-" * (w + 2) for w in widths) + "|", *map(line, rows)])
        + "\n"
    )
