"""Every ``--dry-run`` prints a prepared job through ``render_document``: each ``Prepared*`` type of
``gpufabric.jobs`` is registered, its text is byte for byte what the CLI assembled itself before the move
(the old assembly is kept here as the reference), the commands print exactly ``render_document``'s text,
``json`` is every job's recorded plan with its header fields, and a format the renderer lacks is one line.

Everything is prepared on this host with no GPU (``CUDA_VISIBLE_DEVICES`` empty, gloo, the local launcher);
tune pretends one GPU (``CUDA_VISIBLE_DEVICES=0``: it refuses gloo ranks). Nothing starts a rank.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import gpufabric.jobs
from gpufabric.bench.runner import PreparedSweep
from gpufabric.cli.app import app
from gpufabric.errors import UsageError
from gpufabric.jobs import (
    BenchRequest,
    Execution,
    IsolateRequest,
    LaunchRequest,
    PreparedAB,
    PreparedLaunch,
    PreparedMeasurement,
    PreparedTrain,
    PreparedTune,
    TrainRequest,
    TuneRequest,
    isolate_plan_notes,
    notes_of,
    plans_of,
    prepare_ab,
    prepare_bench,
    prepare_isolate,
    prepare_launch,
    prepare_train,
    prepare_tune,
)
from gpufabric.jobs.nccl_tests import DRY_RUN_NOTE, PreparedNcclTests
from gpufabric.launch.local import LocalLauncher
from gpufabric.report import PREPARED_FORMATS, Format, formats_of, render_document, render_launch_plan

SECRET = "hf_dryRunMustNotPrintThis0123456789"
USER_ENV = {"NCCL_SOCKET_IFNAME": "lo", "HF_TOKEN": SECRET}  # --env of every mode
SWEEP = dict(max_bytes="1K", step_factor=8, iters=1, batches=1, warmup=0, backend="gloo")
TASK = "name: t\nnum_nodes: 2\nenvs:\n  HF_TOKEN: placeholder\nrun: |\n  echo hi\n"


@pytest.fixture(autouse=True)
def _no_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    monkeypatch.setenv("NCCL_DEBUG", "WARN")


def _task(tmp_path: Path) -> Path:
    path = tmp_path / "task.yaml"
    path.write_text(TASK, encoding="utf-8")
    return path


# Each mode prepared as its command prepares it; ``tmp`` is where the job's run directories would go
# (nothing is written there).
def _sweep(tmp: Path) -> Any:
    return prepare_bench(BenchRequest(**SWEEP, run_dir=tmp / "run"), Execution(ranks=2, env=USER_ENV))


def _nccl_tests(tmp: Path) -> Any:
    request = BenchRequest(engine="nccl-tests", gpus_per_node=1, nccl_tests_dir=tmp / "build",
                           collectives=["all_reduce", "all_gather"], min_bytes="1K", max_bytes="4K",
                           run_dir=tmp / "run")  # fmt: skip
    return prepare_bench(request, Execution(env=USER_ENV))


def _ab(tmp: Path) -> Any:
    return prepare_ab(BenchRequest(**SWEEP, run_dir=tmp / "ab"), Execution(ranks=2, env=USER_ENV), rounds=2)


def _tune(tmp: Path) -> Any:
    request = TuneRequest(size="1M", min_bytes="1M", max_bytes="1M", budget=3, run_dir=tmp / "tune")
    return prepare_tune(request, Execution(launcher=LocalLauncher, env=USER_ENV))


def _isolate(tmp: Path) -> Any:
    request = IsolateRequest(nodes=4, backend="gloo", size="1K", run_dir=tmp / "iso")
    return prepare_isolate(
        request, Execution(ranks=4, env=USER_ENV), launchers=lambda name, vn: LocalLauncher
    )


def _train(tmp: Path) -> Any:
    return prepare_train(TrainRequest(steps=2, run_dir=tmp / "tr"), Execution(ranks=2, env=USER_ENV))


def _train_ab(tmp: Path) -> Any:
    return prepare_train(
        TrainRequest(steps=2, ab=True, run_dir=tmp / "trab"), Execution(ranks=2, env=USER_ENV)
    )


def _launch(tmp: Path) -> Any:
    request = LaunchRequest(task_file=_task(tmp), on="local", workdir=tmp / "lw")
    return prepare_launch(request, Execution(env=USER_ENV))


PREPARE: dict[str, tuple[Callable[[Path], Any], type]] = {
    "bench": (_sweep, PreparedSweep),
    "nccl-tests": (_nccl_tests, PreparedNcclTests),
    "ab": (_ab, PreparedAB),
    "tune": (_tune, PreparedTune),
    "isolate": (_isolate, PreparedMeasurement),
    "train": (_train, PreparedTrain),
    "train-ab": (_train_ab, PreparedTrain),
    "launch": (_launch, PreparedLaunch),
}


def _prepared(name: str, tmp: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    if name == "tune":
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    make, expected_type = PREPARE[name]
    prepared = make(tmp)
    assert type(prepared) is expected_type
    return prepared


def _text(plan: Any) -> str:
    return render_launch_plan(plan, Format.TEXT)


def cli_text_before(prepared: Any) -> str:
    """What the commands printed before the move, assembled as each CLI module assembled it then."""
    if isinstance(prepared, PreparedAB):  # cli/bench_modes.dry_run_text
        return "\n".join(
            f"# A/B round {job.round}: {job.side}\n{_text(sweep.plan)}" for job, sweep in prepared.jobs
        )
    if isinstance(prepared, PreparedSweep | PreparedNcclTests):  # cli/bench_modes.dry_run_text
        header = "".join(f"# {note}\n" for note in notes_of(prepared))
        return header + "\n".join(_text(plan) for plan in plans_of(prepared))
    if isinstance(prepared, PreparedTune):  # cli/tune.py: typer.echo of each line
        out = ""
        for name, job in prepared.first_round:
            out += f"# tune round 0: {name}\n" + _text(job.plan)
        return out + f"# later rounds follow the measurements, one job each like these, in {prepared.root}\n"
    if isinstance(prepared, PreparedMeasurement):  # cli/isolate.py
        return "".join(f"# {note}\n" for note in isolate_plan_notes(prepared)) + _text(prepared.plan)
    if isinstance(prepared, PreparedTrain):  # cli/train.py
        return "\n".join(_text(plan) for plan in prepared.plans)
    assert isinstance(prepared, PreparedLaunch)  # cli/launch.py
    return _text(prepared.plan)


@pytest.mark.parametrize("name", PREPARE)
def test_text_is_what_the_cli_assembled_before(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prepared = _prepared(name, tmp_path, monkeypatch)
    text = render_document(prepared, Format.TEXT)
    assert text == cli_text_before(prepared)
    assert render_document(prepared, "text") == text  # the word the user types is the same format
    assert text.endswith("\n") and "# launcher: local" in text
    assert SECRET not in text and "HF_TOKEN=" in text  # redacted: the name stays, the value goes
    assert {path.name for path in tmp_path.iterdir()} <= {"task.yaml"}  # preparing wrote nothing


def test_the_headers_name_each_job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ab = render_document(_prepared("ab", tmp_path, monkeypatch), Format.TEXT)
    headers = [line for line in ab.splitlines() if line.startswith("# A/B round ")]
    assert headers == ["# A/B round 0: fabric-on", "# A/B round 0: fabric-off", "# A/B round 1: fabric-off",
                       "# A/B round 1: fabric-on"]  # fmt: skip
    nccl = render_document(_prepared("nccl-tests", tmp_path, monkeypatch), Format.TEXT)
    assert nccl.startswith(f"# {DRY_RUN_NOTE}\n")
    prepared = _prepared("tune", tmp_path, monkeypatch)
    tune = render_document(prepared, Format.TEXT).splitlines()
    assert [line for line in tune if line.startswith("# tune round 0: ")] == [
        "# tune round 0: default", "# tune round 0: 1x1", "# tune round 0: 1x4"
    ]  # fmt: skip
    assert tune[-1] == f"# later rounds follow the measurements, one job each like these, in {prepared.root}"


@pytest.mark.parametrize("name", PREPARE)
def test_json_is_every_jobs_recorded_plan_with_its_header(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prepared = _prepared(name, tmp_path, monkeypatch)
    text = render_document(prepared, Format.JSON)
    assert SECRET not in text
    if isinstance(prepared, PreparedLaunch):  # one plan: its JSON is the plan, as plan.json records it
        assert text == prepared.plan.recorded_json()
        return
    document = json.loads(text)
    assert set(document) == {"notes", "jobs"}
    plans = [job.pop("plan") for job in document["jobs"]]
    assert plans == [json.loads(plan.recorded_json()) for plan in _plans(prepared)]
    assert document["jobs"] == HEADERS[name]
    if isinstance(prepared, PreparedMeasurement):
        assert document["notes"] == isolate_plan_notes(prepared)
    if isinstance(prepared, PreparedSweep | PreparedNcclTests):
        assert document["notes"] == notes_of(prepared)


def _plans(prepared: Any) -> list[Any]:
    if isinstance(prepared, PreparedTune):
        return [job.plan for _, job in prepared.first_round]
    if isinstance(prepared, PreparedMeasurement):
        return [prepared.plan]
    if isinstance(prepared, PreparedSweep | PreparedNcclTests):
        return plans_of(prepared)
    return list(prepared.plans)


# Each case's job headers, written out: the A/B runs ABBA, tune's first round is the defaults then the
# coarse grid in order, train-bench --ab runs fabric-on first.
HEADERS: dict[str, list[dict[str, Any]]] = {
    "bench": [{}],
    "nccl-tests": [{"collective": "all_reduce"}, {"collective": "all_gather"}],
    "ab": [{"round": 0, "side": "fabric-on"}, {"round": 0, "side": "fabric-off"},
           {"round": 1, "side": "fabric-off"}, {"round": 1, "side": "fabric-on"}],
    "tune": [{"round": 0, "candidate": "default"}, {"round": 0, "candidate": "1x1"},
             {"round": 0, "candidate": "1x4"}],
    "isolate": [{"round": 1}],
    "train": [{"label": "train"}],
    "train-ab": [  # ABBA: two rounds, as bench --ab
        {"label": "train fabric-on"}, {"label": "train fabric-off"},
        {"label": "train fabric-off"}, {"label": "train fabric-on"},
    ],
}  # fmt: skip


@pytest.mark.parametrize("name", PREPARE)
def test_a_format_the_renderer_lacks_is_one_line(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prepared = _prepared(name, tmp_path, monkeypatch)
    assert formats_of(type(prepared)) == PREPARED_FORMATS
    with pytest.raises(UsageError, match=r"^--format: unknown value 'table'; choose from text, json$"):
        render_document(prepared, Format.TABLE)
    with pytest.raises(UsageError, match=r"^--format: unknown value 'yaml'; choose from text, json$"):
        render_document(prepared, "yaml")


# The command that prepares each job, its arguments, and the name it calls in ``gpufabric.jobs``.
COMMANDS: dict[str, tuple[str, list[str]]] = {
    "bench": ("prepare_bench", ["bench", "--ranks", "2", "--backend", "gloo", "-e", "1K", "--dry-run"]),
    "nccl-tests": ("prepare_bench", ["bench", "--engine", "nccl-tests", "--gpus-per-node", "1",
                                     "-c", "all_reduce,all_gather", "-e", "4K", "--dry-run"]),
    "ab": ("prepare_ab", ["bench", "--ab", "--ranks", "2", "--backend", "gloo", "-e", "1K", "--dry-run"]),
    "tune": ("prepare_tune", ["tune", "--budget", "3", "-b", "1M", "-e", "1M", "--size", "1M", "--dry-run"]),
    "isolate": ("prepare_isolate", ["isolate", "--nodes", "4", "--backend", "gloo", "--dry-run"]),
    "train": ("prepare_train", ["train-bench", "--ranks", "2", "--steps", "2", "--dry-run"]),
    "train-ab": ("prepare_train", ["train-bench", "--ranks", "2", "--steps", "2", "--ab", "--dry-run"]),
    "launch": ("prepare_launch", ["launch", "TASK", "--dry-run"]),
    "launch-json": ("prepare_launch", ["launch", "TASK", "--dry-run", "--format", "json"]),
}  # fmt: skip


@pytest.mark.parametrize("name", COMMANDS)
def test_the_command_prints_render_document_of_what_it_prepared(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    function, args = COMMANDS[name]
    if name == "tune":
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    monkeypatch.chdir(tmp_path)
    real = getattr(gpufabric.jobs, function)
    seen: list[Any] = []

    def keep(*a: Any, **k: Any) -> Any:
        seen.append(real(*a, **k))
        return seen[-1]

    monkeypatch.setattr(gpufabric.jobs, function, keep)  # the CLI imports it from gpufabric.jobs when run
    args = [str(_task(tmp_path)) if arg == "TASK" else arg for arg in args]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    (prepared,) = seen
    fmt = Format.JSON if "json" in args else Format.TEXT
    assert result.stdout == render_document(prepared, fmt)
    assert {path.name for path in tmp_path.iterdir()} <= {"task.yaml"}  # a dry run writes nothing
