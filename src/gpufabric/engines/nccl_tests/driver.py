"""nccl-tests as an engine: find the ``*_perf`` binaries, build the seeds' exact command lines
(``all_reduce_perf -b 8 -e 2G -f 2 -g 1 -c 5 -w 5 -n 100``, plus ``-J FILE.json`` when the binary's
``--help`` lists it), run them through any launcher, and read the output with the result readers.

Process layout follows nccl-tests itself: without MPI it is one process driving ``-g N`` GPUs, so
``local`` runs one process with every GPU of the node; under ``mpirun``/``slurm`` (nccl-tests built
with ``MPI=1``) it is one process per GPU with ``-g 1``, as the seeds launch it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from gpufabric.boundary_names import NCCL_DEBUG_FILE_ENV
from gpufabric.collectives import NcclTestsProgram
from gpufabric.errors import InputError, LaunchError, UsageError
from gpufabric.launch.base import Launcher, LaunchOutcome, LaunchPlan, OutputSink, RankProgram
from gpufabric.launch.names import launcher_kind
from gpufabric.mpirun_tag import MPIRUN_TAG
from gpufabric.results.model import RunResult

Collective = NcclTestsProgram  # every *_perf program (gpufabric.collectives), alltoallv included
DEFAULT_DIRS = (Path("/opt/nccl-tests/build"),)
JSON_HELP_MARKER = "-J,--output_file"


class NcclTestsSettings(BaseModel):
    """One nccl-tests sweep; defaults are the seeds' flags."""

    model_config = ConfigDict(extra="forbid")

    collective: Collective = "all_reduce"
    min_bytes: str = "8"
    max_bytes: str = "2G"
    step_factor: int = Field(default=2, ge=2)
    check_iters: int = Field(default=5, ge=0, description="-c: correctness-checked iterations")
    warmup_iters: int = Field(default=5, ge=0)
    iters: int = Field(default=100, ge=1)
    extra_args: list[str] = Field(default_factory=list, description="appended verbatim, e.g. -d bfloat16")
    nccl_tests_dir: Path | None = None
    json_output: bool | None = Field(default=None, description="None: use -J when the binary supports it")


def binary_name(collective: str) -> str:
    return f"{collective}_perf"


def locate_binary(
    collective: str, nccl_tests_dir: Path | None = None, *, environ: Mapping[str, str] | None = None
) -> Path:
    """``--nccl-tests-dir``, else PATH, else /opt/nccl-tests/build (where the seeds' images keep them)."""
    name = binary_name(collective)
    environ = os.environ if environ is None else environ
    if nccl_tests_dir is not None:
        # Absolute: mpirun and srun start the ranks elsewhere (other hosts, another working directory).
        candidate = nccl_tests_dir.absolute() / name
        if _executable(candidate):
            return candidate
        raise UsageError(
            f"--nccl-tests-dir {nccl_tests_dir}: no executable {name} there; point it at nccl-tests' build/"
        )
    found = shutil.which(name, path=environ.get("PATH"))
    if found:
        return Path(found)
    for directory in DEFAULT_DIRS:
        if _executable(directory / name):
            return directory / name
    raise UsageError(
        f"{name} not found on PATH or in {', '.join(str(d) for d in DEFAULT_DIRS)}; build nccl-tests "
        "(make MPI=1 in a clone of NVIDIA/nccl-tests) and pass --nccl-tests-dir DIR/build"
    )


def planned_binary(collective: str, nccl_tests_dir: Path | None = None) -> tuple[Path, str | None]:
    """For a dry run: the path the plan would use, and a note when it is not on this machine. The binary
    usually lives in the ranks' image or on the remote hosts, so its absence here is no reason to refuse
    printing the plan."""
    try:
        return locate_binary(collective, nccl_tests_dir), None
    except UsageError:
        name = binary_name(collective)
        where = nccl_tests_dir.absolute() if nccl_tests_dir is not None else DEFAULT_DIRS[0]
        assumed = (
            ""
            if nccl_tests_dir is not None
            else " (where SkyPilot's and AWS's nccl-tests images keep it; --nccl-tests-dir DIR names another)"
        )
        return where / name, f"{name} was not found on this machine; the plan assumes {where / name}{assumed}"


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def help_supports_json(help_text: str) -> bool:
    """Newer nccl-tests list ``[-J,--output_file <file> ...json...]``; older ones had ``-F`` (CSV)."""
    return JSON_HELP_MARKER in help_text


def binary_supports_json(binary: Path, *, timeout_s: float = 30) -> bool:
    """Ask the binary itself: ``--help`` prints usage and exits before MPI or CUDA start."""
    try:
        done = subprocess.run(
            [str(binary), "--help"], capture_output=True, text=True, timeout=timeout_s, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise LaunchError(
            f"{binary} --help failed ({exc}); is it an nccl-tests binary for this machine?"
        ) from exc
    return help_supports_json(done.stdout + done.stderr)


def command_line(binary: Path | str, settings: NcclTestsSettings, *, gpus_per_process: int,
                 json_path: Path | None = None) -> list[str]:  # fmt: skip
    """The argv, in the seeds' order: -b -e -f -g -c -w -n [-J FILE] [extra]."""
    argv = [
        str(binary),
        "-b", settings.min_bytes, "-e", settings.max_bytes, "-f", str(settings.step_factor),
        "-g", str(gpus_per_process),
        "-c", str(settings.check_iters), "-w", str(settings.warmup_iters), "-n", str(settings.iters),
    ]  # fmt: skip
    if json_path is not None:
        argv += ["-J", str(json_path)]
    return argv + list(settings.extra_args)


def nccl_tests_program(
    binary: Path | str,
    settings: NcclTestsSettings,
    *,
    launcher_name: str,
    workdir: Path,
    nodes: int,
    gpus_per_node: int,
    env: Mapping[str, str] | None = None,
    json_output: bool = False,
) -> RankProgram:
    """One process driving every GPU for ``local``; one process per GPU (``-g 1``) under MPI launchers."""
    if gpus_per_node < 1:
        raise UsageError("nccl-tests needs GPUs: pass --gpus-per-node N (N >= 1)")
    json_path = workdir / f"nccl-tests-{settings.collective}.json" if json_output else None
    if launcher_kind(launcher_name).always_here:  # no MPI: one process drives every GPU
        if nodes != 1:
            raise UsageError(
                "nccl-tests without MPI runs on one node; use --on mpirun or --on slurm for several"
            )
        argv = command_line(binary, settings, gpus_per_process=gpus_per_node, json_path=json_path)
        return RankProgram(argv=argv, env=dict(env or {}), nranks=1, nodes=1, gpus_per_node=gpus_per_node,
                           workdir=workdir, label=f"nccl-tests-{settings.collective}")  # fmt: skip
    argv = command_line(binary, settings, gpus_per_process=1, json_path=json_path)
    return RankProgram(argv=argv, env=dict(env or {}), nranks=nodes * gpus_per_node, nodes=nodes,
                       gpus_per_node=gpus_per_node, workdir=workdir,
                       label=f"nccl-tests-{settings.collective}")  # fmt: skip


class NcclTestsRun(BaseModel):
    """What one nccl-tests run left: the parsed result, how the launch ended, the raw log, and how the
    output differs from the command (None when it matches, or when the launch itself failed)."""

    model_config = ConfigDict(extra="forbid")

    result: RunResult | None
    outcome: LaunchOutcome
    log_path: Path
    json_path: Path | None = None
    mismatch: str | None = None


_RANK_PREFIX = re.compile(r"^[\[(](?:rank|node) (?P<rank>\d+)[\])]$")


class RankZeroLog:
    """An OutputSink keeping what rank 0 (or the launcher itself) printed: nccl-tests prints its table
    there. Lines are told apart by the launcher's rank tag, including tags spliced into the middle of a
    line: each rank's fragments are joined back into its own lines, so a row of rank 0 cut by another
    rank's output is restored, and another rank's text never enters rank 0's table."""

    def __init__(self, path: Path, forward: OutputSink | None = None) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.forward = forward
        self._handle = path.open("w", encoding="utf-8")
        self._pending: dict[int | None, str] = {}  # unterminated fragment of each rank

    def __call__(self, prefix: str, line: str) -> None:
        match = _RANK_PREFIX.match(prefix)
        if match is None and any(ch.isdigit() for ch in prefix):
            rank: int | None = -1  # some other tagged writer: never part of rank 0's table
        else:
            rank = int(match["rank"]) if match else None  # None: the launcher's own lines
        # mpirun --tag-output tags every chunk it reads, so another rank's chunk can land mid-line.
        pieces = MPIRUN_TAG.split(line)  # [text, job, rank, stream, text, job, rank, stream, text ...]
        owners = [rank, *(int(r) for r in pieces[2::4])]
        texts = pieces[0::4]
        for index, (owner, text) in enumerate(zip(owners, texts, strict=True)):
            if index < len(texts) - 1:  # cut off by the next tag: the rest comes on a later line
                self._pending[owner] = self._pending.get(owner, "") + text
                continue
            self._keep(owner, self._pending.pop(owner, "") + text)
        if self.forward is not None:
            self.forward(prefix, line)

    def _keep(self, owner: int | None, line: str) -> None:
        if owner in (0, None):
            self._handle.write(line + "\n")
            self._handle.flush()

    def close(self) -> None:
        for owner in (0, None):  # a fragment never finished: written as it is (the reader sees it cut)
            if self._pending.get(owner):
                self._keep(owner, self._pending.pop(owner))
        self._handle.close()


def run_nccl_tests(
    launcher: Launcher,
    program: RankProgram,
    *,
    on_output: OutputSink | None = None,
    timeout_s: float | None = None,
    plan: LaunchPlan | None = None,
) -> NcclTestsRun:
    """Execute ``program`` (from ``nccl_tests_program``; ``plan``: the launcher's rendering of it, when
    already made), read its JSON (``-J``) or its text table, and compare what it printed with what its
    command line asked for (``NcclTestsRun.mismatch``)."""
    from gpufabric.engines.nccl_tests.output_check import Expectation, mismatch
    from gpufabric.results.readers import read_run

    plan = plan if plan is not None else launcher.render(program)
    program.workdir.mkdir(parents=True, exist_ok=True)
    debug_file = program.env.get(NCCL_DEBUG_FILE_ENV)
    if debug_file:  # NCCL never creates the directory: without it, every rank's log goes to stdout
        Path(debug_file).parent.mkdir(parents=True, exist_ok=True)
    json_path = _json_path(program.argv)
    if json_path is not None:
        # nccl-tests never overwrites: it would write FILE.json.0 and leave an old FILE.json to be read.
        json_path.unlink(missing_ok=True)
    log = RankZeroLog(program.workdir / f"{program.label}.log", on_output)
    try:
        outcome = launcher.execute(plan, on_output=log, timeout_s=timeout_s)
    finally:
        log.close()
    source = json_path if json_path is not None and json_path.exists() else log.path
    result: RunResult | None = None
    try:
        result = read_run(source)
    except InputError:
        if outcome.ok:  # a clean exit without a table is a real problem; a failed run explains itself
            raise
    problem = None
    if outcome.ok and result is not None:
        expect = Expectation.from_command(program.argv, processes=program.nranks, launcher=launcher.name)
        problem = mismatch(result, expect)
    virtual_nodes = getattr(launcher, "virtual_nodes", None)
    if result is not None and virtual_nodes:
        name_virtual_nodes(result, program.nranks, virtual_nodes)
    return NcclTestsRun(
        result=result, outcome=outcome, log_path=log.path, json_path=json_path, mismatch=problem
    )


def name_virtual_nodes(result: RunResult, nranks: int, nodes: int) -> None:
    """nccl-tests prints the real host name for every rank; on virtual nodes each rank's node is
    ``host/vnodeK`` as in our engine's results (ranks split into ``nodes`` contiguous groups, as the
    launcher placed them), so doctor and compare count the nodes NCCL saw."""
    per_node = -(-nranks // nodes)
    meta = result.metadata
    for device in meta.devices:
        if device.host and device.rank is not None and "/vnode" not in device.host:
            device.host = f"{device.host}/vnode{device.rank // per_node}"
    named = sorted({d.host for d in meta.devices if d.host})
    if named:
        meta.hosts = named


def _json_path(argv: list[str]) -> Path | None:
    if "-J" in argv:
        return Path(argv[argv.index("-J") + 1])
    return None
