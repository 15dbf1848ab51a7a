"""Each capability lives on its type and is registered once (docs/DESIGN.md, "Adding a launcher / cloud /
collective / job kind"): these checks fail when a new launcher, cloud, collective or prepared job kind is
added in one place and forgotten in its registry.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from pathlib import Path
from typing import get_args

import pytest

from gpufabric.bench.semantics import bus_factor, layout
from gpufabric.bench.sweep_settings import normalize_collectives
from gpufabric.catalog import Cloud
from gpufabric.cli.bench import bench as bench_command
from gpufabric.collectives import (
    ALIASES,
    ALL_COLLECTIVES,
    COLLECTIVES,
    SPECS,
    CollectiveName,
    spec_of,
)
from gpufabric.launch.dry_run import DryRunnable
from gpufabric.launch.names import LAUNCHER_KINDS, LAUNCHER_NAMES, LauncherName
from gpufabric.launch.registry import LauncherSettings, make_launcher
from gpufabric.planner.clouds import PROFILES, cloud_profile
from gpufabric.report.prepared_render import prepared_types
from gpufabric.report.renderers import formats_of

SRC = Path(__file__).resolve().parents[1] / "src" / "gpufabric"


# --- collectives ---------------------------------------------------------------------------------


def test_every_collective_name_has_one_spec() -> None:
    assert set(SPECS) == set(get_args(CollectiveName)) == set(ALL_COLLECTIVES)
    assert all(name == spec.name for name, spec in SPECS.items())


def test_every_collective_the_bench_help_names_has_a_spec() -> None:
    option = inspect.signature(bench_command).parameters["collective"].default
    named = re.findall(r"[a-z_]+", option.help.split(", or all")[0])
    assert tuple(named) == COLLECTIVES
    assert all(spec_of(name).program == f"{name}_perf" for name in named)


@pytest.mark.parametrize("alias", sorted(ALIASES))
def test_every_alias_reaches_its_collective(alias: str) -> None:
    assert normalize_collectives([alias]) == [ALIASES[alias]]
    assert alias not in SPECS  # an alias never shadows a name


@pytest.mark.parametrize("name", ALL_COLLECTIVES)
def test_every_spec_lays_out_and_has_a_bus_factor(name: str) -> None:
    shape = layout(name, 1 << 20, 4, 8)
    assert shape.size_bytes > 0
    assert bus_factor(name, 8) in (1.0, 7 / 8, 2 * 7 / 8)
    assert SPECS[name].rccl_name  # the rccl-tests JSON reader names it too


def test_no_module_keeps_its_own_collective_name_set() -> None:
    """A frozenset or tuple literal of two or more collective names outside collectives.py is a fact kept
    twice; the spec table's sets (``names_where``) are the one source."""
    names = set(ALL_COLLECTIVES)
    offenders = []
    for path in SRC.rglob("*.py"):
        if path.name == "collectives.py" and path.parent == SRC:
            continue
        tree = ast.parse(path.read_text())
        types = {id(n.slice) for n in ast.walk(tree) if isinstance(n, ast.Subscript)}  # Literal[...]: a type
        for node in ast.walk(tree):
            if isinstance(node, ast.Set | ast.Tuple) and id(node) not in types:
                values = [e.value for e in node.elts if isinstance(e, ast.Constant)]
                if len(values) == len(node.elts) >= 3 and set(values) <= names:
                    offenders.append(f"{path.relative_to(SRC)}:{node.lineno}")
    assert offenders == []


# --- launchers -----------------------------------------------------------------------------------


def test_every_launcher_name_has_one_kind() -> None:
    assert tuple(LAUNCHER_KINDS) == LAUNCHER_NAMES == get_args(LauncherName)


@pytest.mark.parametrize("name", LAUNCHER_NAMES)
def test_every_launcher_class_carries_its_kind_and_builds_from_settings(name: str) -> None:
    kind = LAUNCHER_KINDS[name]
    module_name, class_name = kind.implementation.split(":")
    launcher_class = getattr(importlib.import_module(module_name), class_name)
    assert launcher_class.kind is kind
    launcher = make_launcher(name, LauncherSettings())
    assert isinstance(launcher, launcher_class)
    assert launcher.name == name


def test_no_module_outside_the_launchers_tests_a_launcher_name() -> None:
    """``launcher == "local"`` and its kin are asked of the kind instead (``launcher_kind(name).X``). Only
    certify's ``--actions`` target (scontrol for Slurm's nodes, patches for Kubernetes') is named: it is
    a target of its own that ``auto`` derives from the launcher, not a launcher."""
    allowed = {"jobs/certify_actions.py", "jobs/certify_finish.py", "jobs/certify_request.py"}
    pattern = re.compile(r'((==|!=)|\bin \() ?"(local|mpirun|slurm|kubernetes|skypilot)"')
    offenders = []
    for package in ("bench", "engines", "jobs", "launch", "train"):
        for file in sorted((SRC / package).rglob("*.py")):
            relative = str(file.relative_to(SRC))
            if relative in allowed:
                continue
            offenders += [f"{relative}:{i}" for i, line in enumerate(file.read_text().splitlines(), 1)
                          if pattern.search(line)]  # fmt: skip
    assert offenders == []


# --- clouds --------------------------------------------------------------------------------------


@pytest.mark.parametrize("cloud", list(Cloud))
def test_every_cloud_has_a_planner_profile(cloud: Cloud) -> None:
    assert cloud_profile(cloud).cloud is cloud


def test_no_planner_module_branches_on_a_cloud() -> None:
    """Renderers ask the cloud's profile; only the profile table and SkyPilot's per-cloud rules (keyed by
    the cloud whose source states them) name clouds."""
    offenders = []
    for file in sorted((SRC / "planner").glob("*.py")):
        text = file.read_text()
        offenders += [f"{file.name}:{i}" for i, line in enumerate(text.splitlines(), 1)
                      if re.search(r"(\bis (not )?|==|\bin \()Cloud\.", line)]  # fmt: skip
    assert offenders == []
    assert set(PROFILES) == set(Cloud)


# --- prepared jobs -------------------------------------------------------------------------------


@pytest.mark.parametrize("prepared", prepared_types(), ids=lambda t: t.__name__)
def test_every_prepared_job_renders_itself(prepared: type) -> None:
    assert issubclass(prepared, DryRunnable)
    assert "dry_run" in vars(prepared)  # its own, not inherited by accident
    assert formats_of(prepared)  # registered with the renderers


def test_every_prepared_job_with_a_dry_run_is_registered() -> None:
    """A ``Prepared*`` class that says its dry run must be in ``prepared_types`` (one line), or the dry run
    of that mode would fail with 'no renderer'."""
    registered = {t.__name__ for t in prepared_types()}
    found = set()
    for file in [*sorted((SRC / "jobs").glob("*.py")), *sorted((SRC / "bench").glob("*.py"))]:
        for node in ast.walk(ast.parse(file.read_text())):
            prepared = isinstance(node, ast.ClassDef) and node.name.startswith("Prepared")
            if prepared and any(isinstance(f, ast.FunctionDef) and f.name == "dry_run" for f in node.body):
                found.add(node.name)
    assert found == registered
