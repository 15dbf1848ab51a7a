"""The published JSON Schema of a result document, generated from the pydantic models.

``results/schema/run-result.schema.json`` is checked in (and shipped as package data) so tools that do
not run Python can validate our files; a test keeps it identical to what the models generate. Regenerate
it after a model change with ``python -m gpufabric.results.schema --write``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from gpufabric.results.model import SCHEMA_VERSION, RunResult

SCHEMA_PATH = Path(__file__).with_name("schema") / "run-result.schema.json"
SCHEMA_ID = f"https://gpufabric.dev/schema/run-result/v{SCHEMA_VERSION}.json"


def run_result_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of ``RunResult`` as pydantic generates it, with an id and version."""
    schema = RunResult.model_json_schema(mode="serialization")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": "gpufabric run result",
        "x-schema-version": SCHEMA_VERSION,
        **schema,
    }


def render_schema() -> str:
    return json.dumps(run_result_schema(), indent=2, sort_keys=True) + "\n"


def published_schema() -> dict[str, Any]:
    """The checked-in schema file."""
    data: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return data


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args == ["--write"]:
        SCHEMA_PATH.parent.mkdir(parents=True, exist_ok=True)
        SCHEMA_PATH.write_text(render_schema(), encoding="utf-8")
    else:
        sys.stdout.write(render_schema())
    return 0


if __name__ == "__main__":
    sys.exit(main())
