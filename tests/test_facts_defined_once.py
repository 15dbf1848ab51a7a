"""Each fact the layers share is defined once (issue 21): the collectives' names and sets, mpirun's output
tag and the ranks' exit protocol. A second copy drifts: the nccl-tests engine's own collective list once
lacked alltoallv, which ``-c`` accepts, and planning it ended in a pydantic traceback."""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from pathlib import Path

import pytest
from pydantic import BaseModel

import gpufabric
from gpufabric import boundary_names, collectives, options
from gpufabric.bench import rundir, semantics
from gpufabric.bench.config import BenchConfig
from gpufabric.engines import NCCL_LIB_ENV
from gpufabric.engines.nccl_tests.driver import NcclTestsSettings, RankZeroLog
from gpufabric.expect.published import efa_count_figures
from gpufabric.jobs import (
    BenchRequest,
    CertifyRequest,
    IsolateRequest,
    LaunchRequest,
    TrainRequest,
    TuneRequest,
)
from gpufabric.launch import identity as launch_identity
from gpufabric.mpirun_tag import MPIRUN_TAG
from gpufabric.planner import PlanRequest
from gpufabric.results.model import ENGINE_COLLECTIVES
from gpufabric.results.readers.prefixes import split_prefixes
from gpufabric.train.config import TrainConfig

SRC = Path(gpufabric.__file__).parent
HOME = {
    "collectives": SRC / "collectives.py",
    "collective sets": SRC / "bench" / "semantics.py",
    "mpirun tag": SRC / "mpirun_tag.py",
    "exit protocol": SRC / "bench" / "rank_process.py",
    "boundary names": SRC / "boundary_names.py",
}


def _modules() -> list[Path]:
    return sorted(SRC.rglob("*.py"))


def _strings(node: ast.AST) -> set[str]:
    """The string constants directly inside a tuple/list/set literal or a ``Literal[...]`` subscript."""
    if isinstance(node, ast.Subscript):
        node = node.slice
    if not isinstance(node, ast.Tuple | ast.List | ast.Set):
        return set()
    return {e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}


def test_no_module_but_collectives_spells_out_the_collective_list() -> None:
    every = set(collectives.COLLECTIVES)
    copies = [
        f"{path.relative_to(SRC)}:{node.lineno}"
        for path in _modules()
        if path != HOME["collectives"]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if every <= _strings(node)
    ]
    assert copies == [], f"import the names from gpufabric.collectives instead: {copies}"


# bench/config.py's engine-only check of one element per rank names three of SPLIT on purpose.
_SETS = {"REDUCING": semantics.REDUCING, "ROOTED": semantics.ROOTED, "SPLIT": semantics.SPLIT}


@pytest.mark.parametrize("name", sorted(_SETS))
def test_no_module_but_semantics_spells_out_a_collective_set(name: str) -> None:
    members = set(_SETS[name])
    copies = [
        f"{path.relative_to(SRC)}:{node.lineno}"
        for path in _modules()
        if path != HOME["collective sets"]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if _strings(node) == members
    ]
    assert copies == [], f"import {name} from gpufabric.bench.semantics instead: {copies}"


def test_the_sets_that_print_an_op_are_the_reducing_ones_and_sendrecv() -> None:
    assert {"sendrecv"} | semantics.REDUCING == semantics.PRINTS_OP
    assert {"all_gather", "reduce_scatter", "alltoall"} <= semantics.SPLIT


def test_the_old_names_are_the_one_list() -> None:
    assert semantics.COLLECTIVES is collectives.COLLECTIVES
    assert semantics.ALL_COLLECTIVES is collectives.ALL_COLLECTIVES
    assert ENGINE_COLLECTIVES is collectives.COLLECTIVES
    assert set(collectives.ALL_COLLECTIVES) < set(collectives.NCCL_TESTS_PROGRAMS)


@pytest.mark.parametrize("name", collectives.ALL_COLLECTIVES)
def test_the_nccl_tests_engine_takes_every_collective_bench_accepts(name: str) -> None:
    assert NcclTestsSettings(collective=name).collective == name


# Every name that crosses a process boundary (an environment variable, a stdout tag, NCCL's log files, a
# run root) is spelled in gpufabric.boundary_names only; every other module imports it from there.
_BOUNDARY_NAMES = {
    name: value
    for name, value in vars(boundary_names).items()
    if name.isupper() and isinstance(value, str | Path)
}


# Plain words ("nccl" is a backend too, "runs" a JSON key) count where they name a path: ``x / "nccl"``,
# ``Path("runs")``, or an f-string's ``/nccl/``.
_WORDS = {str(boundary_names.NCCL_LOG_DIR), str(boundary_names.RUNS_ROOT)}


def _spells(path: Path, value: str) -> bool:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if value not in _WORDS:
            if isinstance(node, ast.Constant) and node.value == value:
                return True
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            if any(
                isinstance(side, ast.Constant) and side.value == value for side in (node.left, node.right)
            ):
                return True
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Path":
            if any(isinstance(arg, ast.Constant) and arg.value == value for arg in node.args):
                return True
        elif isinstance(node, ast.JoinedStr):
            parts = [part.value for part in node.values if isinstance(part, ast.Constant)]
            if any(f"/{value}/" in str(part) or str(part).startswith(f"{value}/") for part in parts):
                return True
    return False


def _constants(path: Path) -> set[str]:
    return {
        node.value
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }


def test_the_boundary_names_module_is_a_leaf() -> None:
    imported = [
        node
        for node in ast.walk(ast.parse(HOME["boundary names"].read_text(encoding="utf-8")))
        if isinstance(node, ast.Import | ast.ImportFrom)
        and any(name.startswith("gpufabric") for name in _imported_modules(node))
    ]
    assert imported == []


def _imported_modules(node: ast.Import | ast.ImportFrom) -> list[str]:
    return [alias.name for alias in node.names] if isinstance(node, ast.Import) else [node.module or ""]


@pytest.mark.parametrize("name", sorted(_BOUNDARY_NAMES))
def test_each_boundary_name_is_spelled_once(name: str) -> None:
    value = str(_BOUNDARY_NAMES[name])
    others = [path for path in _modules() if path != HOME["boundary names"]]
    spelled = sorted(str(path.relative_to(SRC)) for path in others if _spells(path, value))
    assert spelled == [], f"import {name} from gpufabric.boundary_names instead"


def test_every_environment_variable_of_ours_is_a_boundary_name() -> None:
    """A new ``GPUFABRIC_*`` variable read or set anywhere must be added to boundary_names."""
    ours = {value for value in map(str, _BOUNDARY_NAMES.values()) if value.startswith("GPUFABRIC_")}
    found = {
        (str(path.relative_to(SRC)), value)
        for path in _modules()
        for value in _constants(path)
        if re.fullmatch(r"GPUFABRIC_[A-Z_]+ ?", value) and value not in ours
    }
    assert found == set()


# A heredoc's end marker in the remote rank script: shell text that no other process reads.
_NOT_A_NAME = {"GPUFABRIC_CONFIG"}


def test_messages_and_shell_text_name_our_variables_through_the_constants() -> None:
    """An error message, a help text or a generated script that names a variable takes it from
    boundary_names too (docstrings and comments may name it: they are read by people, not programs)."""
    found = []
    for path in _modules():
        if path == HOME["boundary names"]:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {
            id(node.value)
            for node in ast.walk(tree)
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
                names = set(re.findall(r"GPUFABRIC_[A-Z_]+", node.value)) - _NOT_A_NAME
                found += [f"{path.relative_to(SRC)}:{node.lineno} {name}" for name in sorted(names)]
    assert found == []


def test_the_rank_side_and_the_launchers_use_the_same_objects() -> None:
    assert launch_identity.LAUNCHER_ENV is boundary_names.LAUNCHER_ENV
    assert NCCL_LIB_ENV is boundary_names.NCCL_LIB_ENV
    assert rundir.PROGRESS_TAG is boundary_names.PROGRESS_TAG


def test_only_mpirun_tag_spells_out_the_tag_and_only_rank_process_the_exit_codes() -> None:
    tag = [p for p in _modules() if "stdout|stderr|stddiag" in p.read_text(encoding="utf-8")]
    assert tag == [HOME["mpirun tag"]]
    codes = [p for p in _modules() if "EXIT_USAGE = " in p.read_text(encoding="utf-8")]
    assert codes == [HOME["exit protocol"]]


def test_the_three_users_of_the_tag_read_a_line_alike(tmp_path: Path) -> None:
    """The launcher routes by it, the nccl-tests engine keeps rank 0's table by it, the readers peel it."""
    glued = "[1,0]<stdout>:   1024   256 float sum[1,1]<stdout>:rank one"
    assert MPIRUN_TAG.match(glued) is not None
    source, text = split_prefixes(glued)
    assert source.tags == (("mpirun", 0),) and text == "   1024   256 float sumrank one"
    log = RankZeroLog(tmp_path / "rank0.log")
    log("[rank 0]", "   1024   256 float sum[1,1]<stdout>:rank one")
    log("[rank 1]", "more of rank one")
    log("[rank 0]", " rest of row 0")
    log.close()
    assert (tmp_path / "rank0.log").read_text(encoding="utf-8") == "   1024   256 float sum rest of row 0\n"


# Issue 38's twins: each line shape or figure below is spelled in one module, which the others import;
# the third element names the modules that may spell it too, and why.
_SPELLED_ONCE: dict[str, tuple[str, str, set[str]]] = {
    "nccl-tests' device line": (r"Pid\s+", "results/device_line.py", set()),
    "what one EFA of p4d's four gives": ("p4d gave", "expect/published.py", set()),
    # identity.py defines the model; task_program.py builds it for every launcher (with the task's id)
    "a program's node layout": ("NodeLayout(", "launch/task_program.py", {"launch/identity.py"}),
    "srun --label's task prefix": (r"(\d+): ?(.*)", "launch/slurm_output.py", set()),
    # libnccl reads the banner compiled into the library's bytes, with its CUDA part
    "NCCL's version line": ("NCCL version (", "results/nccl_version.py", {"capabilities/libnccl.py"}),
}


@pytest.mark.parametrize("fact", sorted(_SPELLED_ONCE))
def test_each_twin_is_spelled_in_one_module(fact: str) -> None:
    text, home, also = _SPELLED_ONCE[fact]
    spelled = {str(p.relative_to(SRC)) for p in _modules() if text in p.read_text(encoding="utf-8")}
    assert spelled - also == {home}, f"import it from gpufabric/{home} instead"


def test_the_efa_count_figures_are_the_published_ones() -> None:
    # SkyPilot's EFA guide, AWS VM table, 2 GB row: 77.90 GB/s with 4 EFA, 20.31 with 1.
    assert efa_count_figures() == "SkyPilot's EFA guide: 2x p4d gave 20 GB/s with 1 EFA, 78 GB/s with 4"


def _regex_strings(path: Path) -> set[str]:
    """The string constants of ``path`` that are regular expressions (docstrings left out)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
    }
    return {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
        if "(?" in node.value or "\\" in node.value
    }


def test_only_the_nccl_log_patterns_say_which_lines_prove_a_network() -> None:
    # The catalog kept its own per-fabric log markers, which disagreed with the doctor's reading (issue 38).
    spelled = {
        str(path.relative_to(SRC))
        for path in _modules()
        if any("Using network" in text or "via NET/" in text for text in _regex_strings(path))
    }
    assert spelled == {"nccl_logs/patterns.py"}
    data = [p.name for p in (SRC / "catalog" / "data").rglob("*.yaml") if "Using network" in p.read_text()]
    assert data == []


# Each command's flags and its request model share one options model (gpufabric.options): the CLI reads
# its defaults from it, the request model subclasses it, and the settings a rank reads take theirs from it.
# Per command: (CLI module, function) -> (options model, {flag parameter: field} where the names differ).
_COMMANDS: dict[tuple[str, str], tuple[type[BaseModel], dict[str, str]]] = {
    ("bench", "bench"): (options.BenchOptions, {"collective": "collectives", "budget": "budget_s"}),
    ("tune", "tune"): (options.TuneOptions, {}),
    ("train", "train_bench"): (options.TrainOptions, {}),
    ("launch", "launch_command"): (options.LaunchOptions, {}),
    ("isolate", "isolate"): (options.IsolateOptions, {"bad_link": "bad_links", "simulate_run": "simulate"}),
    ("certify", "certify"): (options.CertifyOptions, {"budget": "budget_s"}),
    ("plan", "plan_command"): (PlanRequest, {}),  # the planner's request is light: it is its own options
}
# Flags of several commands that no request holds: where the ranks run, and the A/B's rounds.
_SHARED = {"on": options.PLACEMENT_DEFAULTS.on, "mpirun": options.PLACEMENT_DEFAULTS.mpirun}
_SHARED_ROUNDS = options.AB_ROUNDS
_REQUESTS: dict[type[BaseModel], tuple[type[BaseModel], set[str]]] = {
    # request model -> (its options, the fields it adds)
    BenchRequest: (options.BenchOptions, set()),
    TuneRequest: (options.TuneOptions, {"link"}),
    TrainRequest: (options.TrainOptions, set()),
    LaunchRequest: (options.LaunchOptions, {"task_file"}),
    IsolateRequest: (options.IsolateOptions, set()),
    CertifyRequest: (options.CertifyOptions, set()),
}


def _typer_defaults(module: str, function: str) -> dict[str, ast.expr]:
    """Each parameter of the command function -> the first argument of its ``typer.Option(...)``."""
    tree = ast.parse((SRC / "cli" / f"{module}.py").read_text(encoding="utf-8"))
    [command] = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == function]
    found: dict[str, ast.expr] = {}
    positional = command.args.args[len(command.args.args) - len(command.args.defaults) :]
    for arg, default in zip(positional, command.args.defaults, strict=True):
        if isinstance(default, ast.Call) and default.args:
            found[arg.arg] = default.args[0]
    return found


def _literal(node: ast.expr) -> bool:
    """A default spelled as a value (``"float"``, ``5``, ``[]``), not read from a model; ``None`` (the flag
    left out) and ``...`` (required) are no defaults."""
    try:
        value = ast.literal_eval(node)
    except ValueError:
        return False
    return value is not None and value is not Ellipsis


@pytest.mark.parametrize("command", sorted(_COMMANDS), ids=lambda c: c[0])
def test_a_flag_of_a_request_field_reads_its_default_from_the_options(command: tuple[str, str]) -> None:
    model, renamed = _COMMANDS[command]
    spelled = [
        parameter
        for parameter, default in _typer_defaults(*command).items()
        if renamed.get(parameter, parameter) in model.model_fields and _literal(default)
    ]
    assert spelled == [], f"cli/{command[0]}.py: read these defaults from gpufabric.options: {spelled}"


@pytest.mark.parametrize("command", sorted(_COMMANDS), ids=lambda c: c[0])
def test_the_flags_defaults_are_the_options_defaults(command: tuple[str, str]) -> None:
    """What ``--help`` shows is what the library gets: a flag left out is the options' default (``None``
    where the CLI fills it in itself, as the run directory)."""
    model, renamed = _COMMANDS[command]
    function = getattr(importlib.import_module(f"gpufabric.cli.{command[0]}"), command[1])
    wrong = {}
    for name, parameter in inspect.signature(function).parameters.items():
        field = model.model_fields.get(renamed.get(name, name))
        shown = getattr(parameter.default, "default", None)
        if field is not None and shown is not None:
            expected = field.get_default(call_default_factory=True)
            if shown != expected:
                wrong[name] = (shown, expected)
    assert wrong == {}


def test_no_command_spells_the_launcher_or_the_ab_rounds_defaults() -> None:
    spelled = [
        f"cli/{path.stem}.py --{parameter}"
        for path in sorted((SRC / "cli").glob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.FunctionDef)
        for parameter, default in _typer_defaults_of(node).items()
        if (parameter in _SHARED or parameter == "rounds") and _literal(default)
    ]
    assert spelled == []
    assert _SHARED == {"on": "local", "mpirun": "mpirun"} and _SHARED_ROUNDS == 2


def _typer_defaults_of(function: ast.FunctionDef) -> dict[str, ast.expr]:
    positional = function.args.args[len(function.args.args) - len(function.args.defaults) :]
    return {
        arg.arg: default.args[0]
        for arg, default in zip(positional, function.args.defaults, strict=True)
        if isinstance(default, ast.Call)
        and getattr(default.func, "attr", "") in ("Option", "Argument")
        and default.args
    }


@pytest.mark.parametrize("request_model", list(_REQUESTS), ids=lambda m: m.__name__)
def test_each_request_model_is_its_options_and_adds_no_default_of_its_own(
    request_model: type[BaseModel],
) -> None:
    base, added = _REQUESTS[request_model]
    assert issubclass(request_model, base)
    assert set(request_model.model_fields) - set(base.model_fields) == added


# The settings a rank reads: their fields that a flag sets take the flag's default from the options. Two
# differ on purpose: a BenchConfig built by the library is labelled "gpufabric" (bench's runs "bench"),
# and its engine is the rank program ("auto"), where the flag names the tool ("gpufabric", "nccl-tests").
_SETTINGS = {
    "bench/sweep_settings.py": (options.BENCH_DEFAULTS, {}),
    "bench/timing_settings.py": (options.BENCH_DEFAULTS, {"time_reduction": "average"}),
    "bench/placement_settings.py": (options.BENCH_DEFAULTS, {"engine": ""}),
    "bench/config.py": (options.BENCH_DEFAULTS, {"label": ""}),
    "train/config.py": (options.TRAIN_DEFAULTS, {"bucket_cap_mb": "bucket_mb", "fsdp_prefetch": "prefetch"}),
}


def _field_default(value: ast.expr) -> ast.expr | None:
    if isinstance(value, ast.Call) and getattr(value.func, "id", "") == "Field":
        keywords = {k.arg: k.value for k in value.keywords}
        return keywords.get("default", value.args[0] if value.args else None)
    return value


@pytest.mark.parametrize("module", sorted(_SETTINGS))
def test_the_settings_a_rank_reads_take_the_flags_defaults_from_the_options(module: str) -> None:
    defaults, renamed = _SETTINGS[module]
    spelled = []
    for node in ast.walk(ast.parse((SRC / module).read_text(encoding="utf-8"))):
        if isinstance(node, ast.ClassDef):
            for statement in node.body:
                if not isinstance(statement, ast.AnnAssign) or statement.value is None:
                    continue
                name = getattr(statement.target, "id", "")
                field = renamed.get(name, name)
                default = _field_default(statement.value)
                flag_default = getattr(defaults, field, None)  # None: the request works it out
                if flag_default is not None and default is not None and _literal(default):
                    spelled.append(name)
    assert spelled == [], f"{module}: take these defaults from gpufabric.options: {spelled}"


def test_the_settings_defaults_are_the_flags_defaults() -> None:
    bench, train = BenchConfig(), TrainConfig()
    shared = set(BenchConfig.model_fields) & set(options.BenchOptions.model_fields) - {"label", "engine"}
    shared -= {"min_bytes", "max_bytes", "step_factor", "iters", "batches"}  # options.GPU_SWEEP's, below
    assert {f: getattr(bench, f) for f in shared} == {f: getattr(options.BENCH_DEFAULTS, f) for f in shared}
    assert (bench.min_bytes, bench.max_bytes, bench.step_factor) == (
        8,
        128 << 20,
        options.GPU_SWEEP.step_factor,
    )
    assert (bench.iters, bench.batches) == (options.GPU_SWEEP.iters, options.GPU_SWEEP.batches)
    assert bench.time_reduction == options.BENCH_DEFAULTS.average
    assert (train.bucket_cap_mb, train.fsdp_prefetch) == (
        options.TRAIN_DEFAULTS.bucket_mb,
        options.TRAIN_DEFAULTS.prefetch,
    )
    train_shared = {
        f
        for f in set(TrainConfig.model_fields) & set(options.TrainOptions.model_fields) - {"model"}
        if getattr(options.TRAIN_DEFAULTS, f) is not None  # None: the request works it out
    }
    assert {f: getattr(train, f) for f in train_shared} == {
        f: getattr(options.TRAIN_DEFAULTS, f) for f in train_shared
    }
