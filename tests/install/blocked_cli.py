"""Run the gpufabric CLI as if no optional extra were installed: ``python blocked_cli.py ARGS...``.

A meta path finder placed first answers every import of an optional dependency (torch, kubernetes,
urllib3, nccl4py's ``nccl``, cuda-core's ``cuda``, botocore, google) with ``ModuleNotFoundError``, the
error a plain ``pip install gpufabric`` gives, even where the developer's virtualenv has them all. Then
the console script's ``main`` runs with ARGS. ``--import-all`` instead imports every module under
``gpufabric`` and prints, one per line, those that could not be imported and why; ``--help-all`` runs
``--help`` of the app and of every command in this one process and prints one JSON line for each.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import pkgutil
import sys
from collections.abc import Sequence
from types import ModuleType

BLOCKED = ("torch", "kubernetes", "kubernetes_validate", "urllib3", "nccl", "cuda", "botocore", "google")


class BlockOptional(importlib.abc.MetaPathFinder):
    """Refuses the optional dependencies; every other import goes on to the usual finders."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {fullname!r} (blocked)", name=fullname)
        return None


def import_all() -> int:
    import gpufabric

    for info in pkgutil.walk_packages(gpufabric.__path__, "gpufabric."):
        if info.name.endswith(".__main__"):  # runs the CLI when imported
            continue
        try:
            importlib.import_module(info.name)
        except ImportError as exc:
            print(f"{info.name}\t{exc}")
    return 0


def help_all() -> int:
    import json

    import typer.main
    from typer.testing import CliRunner

    from gpufabric.cli.app import app

    names = sorted(typer.main.get_command(app).commands)  # type: ignore[attr-defined]
    for args in [["--help"], *[[name, "--help"] for name in names]]:
        result = CliRunner().invoke(app, args)
        failure = None if result.exception is None else repr(result.exception)
        print(json.dumps({"args": args, "exit_code": result.exit_code, "exception": failure,
                          "usage": "Usage" in result.output}))  # fmt: skip
    return 0


def block_optional() -> None:
    """Make every optional dependency absent in this process.

    The finder makes each import fail. ``None`` in ``sys.modules`` for each top-level name also makes
    ``importlib.util.find_spec`` answer None, as it does on a plain install (a finder can only refuse by
    raising, which find_spec would pass on to code that checks for a package without importing it).
    """
    sys.meta_path.insert(0, BlockOptional())
    for name in [m for m in sys.modules if m.split(".")[0] in BLOCKED]:
        del sys.modules[name]
    for name in BLOCKED:
        sys.modules[name] = None  # type: ignore[assignment]


def main() -> None:
    block_optional()
    if sys.argv[1:] == ["--import-all"]:
        sys.exit(import_all())
    if sys.argv[1:] == ["--help-all"]:
        sys.exit(help_all())
    from gpufabric.cli.app import main as cli_main

    sys.argv = ["gpufabric", *sys.argv[1:]]
    cli_main()


if __name__ == "__main__":
    main()
