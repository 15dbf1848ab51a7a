"""gpufabric's import graph: no cycle between packages, and no two modules that import each other.

The graph is read from the source with ``ast`` (nothing is imported). Every import of a ``gpufabric``
module counts, of three kinds, each an edge: ``top`` (at module level: it runs when the module loads),
``function`` (inside a function: it runs when the function is called; used to defer heavy imports, see
``benchmarks/import_time.py``) and ``typing`` (under ``if TYPE_CHECKING:``: it never runs, but the module
still depends on the other's types). A deferred or type-only import is still a dependency, so both rules
count all three kinds; the failure message names each edge's kind.

``from gpufabric.pkg import name`` is an edge to ``gpufabric.pkg.name`` when that is a module, else to the
package's ``__init__`` (whose exports load lazily, ``gpufabric._lazy``). A package is ``gpufabric.X``: a
directory with everything under it, or a one-module unit (``gpufabric.errors``). The direction the rules
keep is drawn in ``docs/DESIGN.md`` ("Import rules").
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).parents[1] / "src"
PACKAGE_ROOT = SRC / "gpufabric"
Edges = dict[tuple[str, str], set[str]]  # (importer, imported) -> the kinds of import between them


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in PACKAGE_ROOT.rglob("*.py")}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _targets(statement: ast.Import | ast.ImportFrom) -> Iterator[str]:
    if isinstance(statement, ast.Import):
        yield from (alias.name for alias in statement.names if alias.name.startswith("gpufabric"))
        return
    module = statement.module or ""
    if statement.level or not module.startswith("gpufabric"):
        return
    for alias in statement.names:
        submodule = f"{module}.{alias.name}"
        yield submodule if submodule in MODULES else module


def imports_of(path: Path) -> Iterator[tuple[str, str]]:
    """``(imported module, kind)`` for every gpufabric import in ``path``."""

    def walk(node: ast.AST, kind: str) -> Iterator[tuple[str, str]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import | ast.ImportFrom):
                yield from ((target, kind) for target in _targets(child))
            elif isinstance(child, ast.If) and _is_type_checking(child.test):
                for statement in child.body:
                    yield from walk(ast.Module(body=[statement], type_ignores=[]), "typing")
                for statement in child.orelse:
                    yield from walk(ast.Module(body=[statement], type_ignores=[]), kind)
            else:
                inner = (
                    "function"
                    if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
                    else kind
                )
                yield from walk(child, "typing" if kind == "typing" else inner)

    yield from walk(ast.parse(path.read_text(encoding="utf-8")), "top")


def module_edges() -> Edges:
    edges: Edges = {}
    for name, path in MODULES.items():
        for target, kind in imports_of(path):
            if target in MODULES and target != name:
                edges.setdefault((name, target), set()).add(kind)
    return edges


def package_of(module: str) -> str:
    return ".".join(module.split(".")[:2])


def cycles(edges: Edges) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan's algorithm), each sorted."""
    graph: dict[str, set[str]] = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def describe(edges: Edges, members: list[str], of: dict[tuple[str, str], list[str]]) -> str:
    inside = sorted((a, b) for a, b in edges if a in members and b in members)
    return "; ".join(f"{a} -> {b} ({', '.join(of[a, b])})" for a, b in inside)


def test_the_graph_is_read() -> None:
    """The reader finds edges of each kind (a graph read wrongly as empty would pass the rules below)."""
    edges = module_edges()
    kinds = {kind for found in edges.values() for kind in found}
    assert kinds == {"top", "function", "typing"}
    assert "top" in edges["gpufabric.engines.torch.rank", "gpufabric.bench.config"]
    assert cycles({("a", "b"): {"top"}, ("b", "c"): {"function"}, ("c", "a"): {"typing"}}) == [
        ["a", "b", "c"]
    ]


def test_no_cycle_between_packages() -> None:
    modules = module_edges()
    packages: Edges = {}
    through: dict[tuple[str, str], list[str]] = {}
    for (a, b), kinds in modules.items():
        pair = (package_of(a), package_of(b))
        if pair[0] != pair[1]:
            packages.setdefault(pair, set()).update(kinds)
            through.setdefault(pair, []).append(f"{a} -> {b} {'/'.join(sorted(kinds))}")
    found = cycles(packages)
    assert found == [], "\n".join(f"{members}: {describe(packages, members, through)}" for members in found)


def test_no_two_modules_import_each_other() -> None:
    edges = module_edges()
    loops = sorted(
        f"{a} ({'/'.join(sorted(kinds))}) <-> {b} ({'/'.join(sorted(edges[b, a]))})"
        for (a, b), kinds in edges.items()
        if a < b and (b, a) in edges
    )
    assert loops == []
