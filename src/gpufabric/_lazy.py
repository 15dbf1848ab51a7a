"""Package names loaded on first use, so that importing one small module does not import its whole package.

``import gpufabric.report.formats`` runs ``gpufabric/report/__init__.py`` first; when that ``__init__``
imports every renderer, ``gpufabric --help`` pays for numpy and every pydantic model of every command
(issue 36 measured 0.94 s of imports). So a package's ``__init__`` names its public API once, as ordinary
imports under ``if TYPE_CHECKING:`` (what mypy and readers see), and calls ``lazy_package(__name__)``
otherwise: each name is imported from its module when it is first read, as scientific-python's
``lazy_loader.attach_stub`` does from a ``.pyi`` file.

A package can export a function named like one of its modules (``gpufabric.analysis.doctor``, the
function, lives in ``analysis/doctor.py``). Python sets the module as the package's attribute when the
module is imported, which an eager ``__init__`` overwrote with the function right after; here the package
refuses that attribute instead, so the exported name stays the function whoever imports the module first.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any


def _type_checking_imports(init_file: str) -> dict[str, tuple[str, str]]:
    """``{exported name: (module, name in that module)}`` from the ``if TYPE_CHECKING:`` block(s)."""
    tree = ast.parse(Path(init_file).read_text(encoding="utf-8"))
    names: dict[str, tuple[str, str]] = {}
    for node in tree.body:
        test = node.test if isinstance(node, ast.If) else None
        if not (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING"):
            continue
        for statement in node.body:  # type: ignore[attr-defined]  # an ast.If, checked through its test
            if isinstance(statement, ast.ImportFrom) and statement.module and not statement.level:
                for alias in statement.names:
                    names[alias.asname or alias.name] = (statement.module, alias.name)
    return names


class LazyPackage(ModuleType):
    """A package whose exported names are imported on first read (see the module's docstring)."""

    _lazy_names: dict[str, tuple[str, str]]

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # dunder probes (__path__ of a plain module, __wrapped__ ...)
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        where = self._lazy_names.get(name)
        if where is not None:
            value = getattr(importlib.import_module(where[0]), where[1])
            ModuleType.__setattr__(self, name, value)  # the next read is a plain attribute
            return value
        submodule = f"{self.__name__}.{name}"
        if importlib.util.find_spec(submodule) is not None:  # `pkg.module` after `import pkg`, as before
            return importlib.import_module(submodule)
        raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")

    def __setattr__(self, name: str, value: Any) -> None:
        lazy = self.__dict__.get("_lazy_names", {})
        shadows = (
            isinstance(value, ModuleType) and name in lazy and value.__name__ == f"{self.__name__}.{name}"
        )
        if not shadows:  # the module named like an exported function: the function stays the name
            super().__setattr__(name, value)

    def __dir__(self) -> list[str]:
        return sorted({*super().__dir__(), *self._lazy_names})


def lazy_package(package: str) -> None:
    """Make ``package`` (its ``__init__`` calls this with ``__name__``) load its exported names lazily."""
    module = sys.modules[package]
    assert module.__file__ is not None  # a package's __init__.py always has one
    names = _type_checking_imports(module.__file__)
    module.__class__ = LazyPackage
    ModuleType.__setattr__(module, "_lazy_names", names)
