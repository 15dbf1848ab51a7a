"""``run_bench``: the library call that runs one sweep through any launcher (``--on``); ``gpufabric bench``,
``bench --ab`` (``bench.ab``: one call per side and round) and ``tune`` (``bench.tune``) measure through it.

It checks the request, prepares the run directory (``config.json``, ``nccl/`` for NCCL's per-rank debug
logs), hands a ``RankProgram`` to a launcher (the local one by default), follows rank 0's progress
lines, and returns the ``RunResult`` rank 0 wrote. On failure it says which rank failed and why, using
the one-line error file the rank left behind.

Every stage is bounded (``gpufabric.bench.stages``): the ranks' stage reports feed a ``StageWatchdog``
that ``run_commands`` polls, so a hang ends as ``BenchTimeout`` naming the stage, collective, size and
the ranks that did not arrive. Whatever ends a run early, ``result.json`` is still written, marked
incomplete, with every size rank 0 streamed before the end (even when rank 0 itself died).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel

from gpufabric.bench.config import BenchConfig, resolve_engine
from gpufabric.bench.failure import diagnose_failure
from gpufabric.bench.fault import Fault
from gpufabric.bench.rundir import (
    CHECK_NOTE,
    CONFIG_NAME,
    NCCL_LOG_DIR,
    PROGRESS_TAG,
    RESULT_NAME,
    STREAM_NAME,
    check_fresh_run_dir,
    check_output_file,
)
from gpufabric.bench.stages import STAGE_TAG, StageTimeouts, StageWatchdog
from gpufabric.bench.world import preflight
from gpufabric.errors import CheckFailed, GpufabricError, InputError, UsageError
from gpufabric.launch.base import Launcher, OutputSink, RankProgram
from gpufabric.launch.processes import watching
from gpufabric.launch.signals import Interrupted
from gpufabric.redact import redact_argv
from gpufabric.results.attestation import Attestation
from gpufabric.results.io import read_result, read_stream, write_result
from gpufabric.results.model import RunMetadata, RunResult

ProgressSink = Callable[[int, int, str, int], None]
"""Called with (rows done, rows expected, collective, size in bytes) as rank 0 finishes each size."""
Attester = Callable[[Sequence[Path]], Attestation]
"""Turns the run's NCCL logs into an ``Attestation`` (``gpufabric.analysis.nccl_log.attest_files``)."""


def default_run_dir(label: str, *, root: Path = Path("runs"), now: datetime | None = None) -> Path:
    stamp = (now or datetime.now()).strftime("%Y%m%d-%H%M%S-%f")
    safe = re.sub(r"[^A-Za-z0-9._-]+", "-", label).strip("-") or "run"
    return root / f"{stamp}-{safe}"


ConfigT = TypeVar("ConfigT", bound=BaseModel)


def prepare_run_dir(config: ConfigT, *, backend: str, config_name: str) -> tuple[ConfigT, Path]:
    """Resolve ``config.run_dir`` (``runs`` means a fresh ``runs/<stamp>-<label>``), create it with its NCCL
    log dir, and write the config every rank reads, with the backend chosen and the command line recorded
    (redacted). Shared by ``gpufabric bench`` and ``gpufabric train-bench``; returns (config, its path).
    A directory that already holds a run is refused (``rundir.check_fresh_run_dir``), never merged."""
    run_dir: Path = getattr(config, "run_dir")  # noqa: B009 - any run config: BenchConfig, TrainConfig
    if run_dir == Path("runs"):
        run_dir = default_run_dir(getattr(config, "label"))  # noqa: B009
    run_dir = run_dir.resolve()
    check_fresh_run_dir(run_dir, markers=[config_name])
    try:
        (run_dir / NCCL_LOG_DIR).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--run-dir: cannot create {run_dir} ({exc.strerror}); choose another path") from exc
    command = getattr(config, "command")  # noqa: B009
    config = config.model_copy(
        update={"run_dir": run_dir, "backend": backend, "command": redact_argv(command or list(sys.argv))}
    )
    config_path = run_dir / config_name
    config_path.write_text(config.model_dump_json(indent=2) + "\n", encoding="utf-8")
    return config, config_path


def rank_module(config: BenchConfig) -> str:
    """The rank program of ``config``'s (resolved) engine."""
    return "gpufabric.bench.direct.rank" if config.engine == "nccl" else "gpufabric.bench.rank"


def nccl_debug_env(run_dir: Path, environ: Mapping[str, str], extra: Mapping[str, str]) -> dict[str, str]:
    """NCCL_DEBUG=INFO into per-rank files under the run directory, unless the user chose otherwise."""
    merged = {**environ, **extra}
    env: dict[str, str] = {}
    if "NCCL_DEBUG" not in merged:
        env["NCCL_DEBUG"] = "INFO"
    if "NCCL_DEBUG_SUBSYS" not in merged:
        env["NCCL_DEBUG_SUBSYS"] = "INIT,NET,ENV"
    if "NCCL_DEBUG_FILE" not in merged:
        env["NCCL_DEBUG_FILE"] = str(run_dir.resolve() / NCCL_LOG_DIR / "nccl.%h.%p.log")
    return env


def run_bench(
    config: BenchConfig,
    *,
    launcher: Launcher | None = None,
    ranks: int | None = None,
    env: Mapping[str, str] | None = None,
    timeout_s: float | None = None,
    on_output: OutputSink | None = None,
    on_progress: ProgressSink | None = None,
    attest: Attester | None = None,
    out: Path | None = None,
    environ: Mapping[str, str] | None = None,
    stage_timeouts: StageTimeouts | None = None,
    ranks_here: bool | None = None,
) -> RunResult:
    """Run the benchmark described by ``config`` and return rank 0's ``RunResult``.

    ``ranks_here``: every rank runs on this host, so its memory bounds ``-e`` (default: the launcher is
    the local one).

    ``timeout_s`` bounds the whole job; ``stage_timeouts`` each stage (defaults: ``StageTimeouts()``).
    Raises ``BenchTimeout`` (a stage or the job ran out of time), ``RankFailure`` (a rank died or
    failed), ``CheckFailed`` (``--check`` found wrong data; the result is kept) or ``UsageError``.
    """
    from gpufabric.launch.local import LocalLauncher

    base = os.environ if environ is None else environ
    extra = dict(env or {})
    if out is not None:
        check_output_file(out)  # before the sweep, not after it
    if ranks_here is None:
        ranks_here = launcher is None or launcher.name == "local"
    nranks, backend, on_gpu, fault = preflight(
        config, ranks=ranks, environ={**base, **extra}, ranks_here=ranks_here
    )
    stages = stage_timeouts or StageTimeouts()
    if stages.total is not None:
        timeout_s = stages.total if timeout_s is None else min(timeout_s, stages.total)
    config = config.model_copy(update={"engine": resolve_engine(config, backend)})
    config, config_path = prepare_run_dir(config, backend=backend, config_name=CONFIG_NAME)
    run_dir = config.run_dir
    program = RankProgram(
        argv=[sys.executable, "-m", rank_module(config), "--config", str(config_path)],
        env={**extra, **nccl_debug_env(run_dir, base, extra)},
        nranks=nranks,
        gpus_per_node=nranks if on_gpu else 0,
        workdir=run_dir,
        label=config.label,
    )
    launcher = launcher or LocalLauncher()
    expected_rows = len(config.collectives) * len(config.sizes())
    done = 0
    watchdog = StageWatchdog(nranks, stages)

    def sink(prefix: str, line: str) -> None:
        nonlocal done
        if watchdog.observe(line):
            return
        if line.startswith(PROGRESS_TAG):
            # Launchers that multiplex ranks (mpirun --tag-output) can glue the next line onto this one:
            # read the first object, pass a glued stage report on, never fail the run over a garbled line.
            try:
                event, end = json.JSONDecoder().raw_decode(line, len(PROGRESS_TAG))
            except json.JSONDecodeError:
                return
            if STAGE_TAG in line[end:]:
                watchdog.observe(line[line.index(STAGE_TAG, end) :])
            done += 1
            if on_progress is not None and isinstance(event, dict):
                on_progress(done, expected_rows, str(event.get("row")), int(event.get("size", 0)))
            return
        if on_output is not None:
            on_output(prefix, line)

    plan = launcher.render(program)
    watchdog.started = watchdog.clock()  # the launch stage starts now, not when the config was written
    with watching(watchdog.check):
        try:
            outcome = launcher.execute(plan, on_output=sink, timeout_s=timeout_s)
        except Interrupted as interrupted:
            # The ranks are already stopped; keep what they measured, then let the CLI say so.
            with contextlib.suppress(GpufabricError, OSError):
                keep_partial(config, run_dir, f"interrupted by {interrupted.signal_name}; every rank was "
                             "stopped", out=out, world_size=nranks, fault=fault)  # fmt: skip
            raise
    if not outcome.ok:
        error = diagnose_failure(run_dir, outcome, timeout_s, watchdog)
        keep_partial(config, run_dir, str(error), out=out, world_size=nranks, fault=fault)
        raise error
    result = read_result(run_dir / RESULT_NAME)
    rewrite = False
    if attest is not None and result.metadata.log_files:
        result.attestation = attest([Path(p) for p in result.metadata.log_files])
        rewrite = True
    check_failure = wrong_data(result, run_dir / RESULT_NAME)
    if check_failure is not None:
        # Every size ran (complete stays true), but the numbers are not to be trusted: say so in the
        # document, so compare, report and doctor see it and not only this command's exit code.
        result.failure = wrong_data_line(result)
        rewrite = True
    if rewrite:
        write_result(result, run_dir / RESULT_NAME)
    if out is not None:
        write_out(result, out, kept=run_dir / RESULT_NAME)
    if check_failure is not None:
        raise check_failure
    return result


def wrong_data_line(result: RunResult) -> str | None:
    """One line naming how many elements were wrong and the first bad rank, index, expected and got."""
    wrong = sum(s.wrong_total or 0 for s in result.series)
    if not wrong:
        return None
    first = next((n.removeprefix(CHECK_NOTE) for n in result.metadata.notes if n.startswith(CHECK_NOTE)), "")
    where = f"; first: {first}" if first else ""
    return f"--check: {wrong} wrong element(s){where}"


def wrong_data(result: RunResult, path: Path) -> CheckFailed | None:
    """``CheckFailed`` with ``wrong_data_line`` when any element was wrong; the result stays at ``path``."""
    line = wrong_data_line(result)
    return None if line is None else CheckFailed(f"{line}; result kept in {path}", result_path=path)


def keep_partial(
    config: BenchConfig,
    run_dir: Path,
    failure: str,
    *,
    out: Path | None,
    world_size: int,
    fault: Fault | None,
) -> RunResult:
    """Write ``result.json`` for a run that ended early: complete=False, ``failure`` set, every size
    rank 0 streamed. Built here, by the parent, so it exists even when rank 0 died."""
    final = run_dir / RESULT_NAME
    result: RunResult | None = None
    if final.exists():
        try:
            result = read_result(final)
        except InputError:
            result = None
    if result is None or result.complete:
        stream = run_dir / STREAM_NAME
        try:
            result = read_stream(stream) if stream.exists() else None
        except InputError:
            result = None
    if result is None:
        result = RunResult(
            label=config.label,
            metadata=RunMetadata(
                engine="gpufabric",
                command=list(config.command),
                backend=config.backend,
                world_size=world_size,
                fault=fault.spec if fault else None,
                notes=["no size finished: rank 0 wrote no result stream"],
            ),
        )
    result = result.model_copy(update={"label": config.label, "complete": False, "failure": failure})
    write_result(result, final)
    if out is not None:
        # The run's own error is what the user must see; --out was checked before the run started.
        with contextlib.suppress(OSError):
            write_result(result, out)
    return result


def write_out(result: RunResult, out: Path, *, kept: Path) -> None:
    """``--out``, checked before the run; a failure now (disk full, the directory gone) is one line."""
    try:
        write_result(result, out)
    except OSError as exc:
        raise UsageError(
            f"--out: cannot write {out} ({exc.strerror or exc}); the result is kept in {kept}"
        ) from exc
