"""results sits below train: it reads and models benchmark runs, and tells a train-bench document apart by
its ``kind`` alone (``readers.train_document``), so no module of results imports train."""

from __future__ import annotations

import ast
from pathlib import Path

import gpufabric.results

RESULTS = Path(gpufabric.results.__file__).parent


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def test_no_results_module_imports_train() -> None:
    offenders = sorted(
        f"{path.relative_to(RESULTS)}: {name}"
        for path in RESULTS.rglob("*.py")
        for name in _imports(path)
        if name == "gpufabric.train" or name.startswith("gpufabric.train.")
    )
    assert offenders == []
