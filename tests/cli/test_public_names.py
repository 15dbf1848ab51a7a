"""The CLI calls the packages through their public names: every ``from gpufabric.X import name`` in
``cli/`` takes ``name`` from a package's curated ``__all__`` (or from a one-module unit such as
``gpufabric.errors``), never from a module inside a package; and every ``import gpufabric.X`` names a
package or such a unit, never a module inside a package.

Modules not converted yet are held at their current count of bypassing names (a ratchet): a new bypass
fails here, and so does a fixed one until its count is lowered. The modules in ``THIN`` have none.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

CLI = Path(__file__).parents[2] / "src" / "gpufabric" / "cli"
THIN = (
    "_common.py", "app.py", "bench.py", "bench_ab.py", "bench_early.py", "bench_modes.py", "bench_output.py",
    "bench_stream.py", "entry.py",
    "catalog.py", "doctor.py", "env.py", "expect.py", "isolate.py", "launch.py", "nodes.py", "plan.py",
    "results.py", "snapshot.py", "train.py", "tune.py", "watch.py",
)  # fmt: skip
# Imports inside packages' modules, per CLI module, still to move to the packages' __all__ (none left).
PENDING: dict[str, int] = {}


def _module_bypass(module: str) -> bool:
    """Whether ``import module`` reaches inside a package: a module that is neither a package nor a
    one-module unit directly under ``gpufabric``."""
    if not module.startswith("gpufabric.") or module.startswith("gpufabric.cli"):
        return False
    target = importlib.import_module(module)
    return not hasattr(target, "__path__") and module.count(".") > 1


def bypasses(path: Path) -> list[str]:
    """``module:name`` of every imported gpufabric name that is not in a package's ``__all__``, and
    ``import module`` of every module inside a package imported whole."""
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [f"import {alias.name}" for alias in node.names if _module_bypass(alias.name)]
            continue
        if not isinstance(node, ast.ImportFrom) or node.module is None or node.level:
            continue
        module = node.module
        if not module.startswith("gpufabric") or module.startswith("gpufabric.cli"):
            continue
        target = importlib.import_module(module)
        is_package = hasattr(target, "__path__")
        one_module_unit = not is_package and module.count(".") == 1  # gpufabric.errors, gpufabric.units
        public = set(getattr(target, "__all__", ()))
        for alias in node.names:
            ok = alias.name in public if (is_package or module == "gpufabric") else one_module_unit
            if one_module_unit and public:
                ok = alias.name in public
            if not ok:
                found.append(f"{module}:{alias.name}")
    return found


def test_thin_cli_modules_import_only_public_names() -> None:
    for name in THIN:
        assert bypasses(CLI / name) == [], name


def test_other_cli_modules_do_not_add_bypasses() -> None:
    counts = {p.name: len(b) for p in sorted(CLI.glob("*.py")) if (b := bypasses(p))}
    assert counts == PENDING


def test_the_check_sees_a_bypass(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from gpufabric.bench.runner import run_sweep\n"  # a module inside a package: a bypass
        "from gpufabric.bench import run_sweep\n"  # the package's public name
        "from gpufabric.errors import UsageError\n"  # a one-module unit
        "import gpufabric.jobs.bench\n"  # a module inside a package, imported whole: a bypass
        "import gpufabric.jobs\n"  # the package
        "import gpufabric.units\n"  # a one-module unit
    )
    assert bypasses(probe) == ["gpufabric.bench.runner:run_sweep", "import gpufabric.jobs.bench"]
