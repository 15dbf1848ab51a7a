"""``gpufabric bench``: parse nccl-tests-style flags, call ``gpufabric.bench.run_bench``, render the result.

With no arguments: every GPU of this host, one process each, NCCL; with no GPU, 4 CPU ranks on gloo
with small sizes, so it runs anywhere. The table goes to stdout; the progress bar to stderr (only on a
terminal, or with ``--progress``).

``--on mpirun|slurm [--hosts|--hostfile]`` runs the same ranks through another launcher and produces the
same result document; ``--engine nccl-tests`` runs NVIDIA's binaries instead of our engine; ``--ab`` runs
the sweep with the fabric on and off (``gpufabric.bench.ab``) and prints the speed-up table and verdict
(``gpufabric.analysis.ab_judge``). Those paths are wired in ``cli/bench_modes.py`` and ``cli/bench_ab.py``;
the table and the progress bar are drawn by ``cli/bench_output.py``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import typer

from gpufabric.bench import BenchConfig, run_bench
from gpufabric.bench.config import normalize_backend
from gpufabric.bench.nccl_tests import NcclTestsSettings
from gpufabric.bench.rundir import check_fresh_run_dir, check_output_file
from gpufabric.bench.runner import Attester
from gpufabric.bench.stages import parse_stage_timeouts
from gpufabric.bench.world import visible_gpu_count
from gpufabric.cli._common import choice, parse_env_pairs
from gpufabric.cli.bench_ab import run_ab_mode
from gpufabric.cli.bench_output import progress_bar
from gpufabric.errors import CheckFailed, GpufabricError, UsageError
from gpufabric.launch.signals import Interrupted
from gpufabric.outputs import is_stdout
from gpufabric.report.nccl_table import FORMATS, render
from gpufabric.results.model import RunResult
from gpufabric.units import parse_size

# Defaults when the user gives none: nccl-tests' usual sweep on GPUs; a quick one for CPU ranks.
GPU_DEFAULTS: dict[str, int | str] = {"min": "8", "max": "128M", "factor": 2, "iters": 20, "batches": 5}
# The CPU sweep steps x8 (few sizes) when that lands exactly on -e, else x2 (see ``default_step``).
CPU_DEFAULTS: dict[str, int | str] = {"min": "8", "max": "32K", "factor": 8, "iters": 5, "batches": 3}
# --engine nccl-tests: the seeds' command line (all_reduce_perf -b 8 -e 2G -f 2 -c 5 -w 5 -n 100).
_SEED = NcclTestsSettings()
NCCL_TESTS_DEFAULTS: dict[str, int | str] = {
    "min": _SEED.min_bytes,
    "max": _SEED.max_bytes,
    "factor": _SEED.step_factor,
    "iters": _SEED.iters,
    "batches": 1,  # nccl-tests times one loop of -n iterations
}


def default_step(min_bytes: int, max_bytes: int, preferred: int) -> int:
    """The size step when -f is not given: ``preferred`` when min * preferred^k is exactly -e, else the
    largest of 4 and 2 that is, else 2; so the sweep ends at the -e the user asked for (with x8 from 8,
    ``-e 1M`` used to stop at 256 KB)."""
    for factor in dict.fromkeys((preferred, 4, 2)):
        size = max(min_bytes, 1)
        while size < max_bytes:
            size *= factor
        if size == max_bytes:
            return factor
    return 2


def parse_precision(text: str) -> float:
    raw = text.strip()
    try:
        value = float(raw[:-1]) / 100 if raw.endswith("%") else float(raw)
    except ValueError as exc:
        raise UsageError(f"--precision: {text!r} is not a percentage; write e.g. 1% or 0.01") from exc
    if not 0 < value < 1:
        raise UsageError(f"--precision: {text!r} must be between 0% and 100% (exclusive), e.g. 1%")
    return value


def bench(
    collective: list[str] = typer.Option(
        ["all_reduce"],
        "-c",
        "--collective",
        help="all_reduce, all_gather, reduce_scatter, alltoall, broadcast, reduce, sendrecv, or all "
        "(repeat or comma-separate)",
    ),
    min_bytes: str | None = typer.Option(None, "-b", "--min-bytes", help="smallest size (8, 1K, 2G)"),
    max_bytes: str | None = typer.Option(None, "-e", "--max-bytes", help="largest size"),
    step_factor: int | None = typer.Option(None, "-f", "--step-factor", help="size multiplier per step"),
    dtype: str = typer.Option("float", "-d", "--dtype", help="float, half, bfloat16, double, int8, ..."),
    op: str = typer.Option(
        "sum",
        "-o",
        "--op",
        help="sum, prod, max, min, avg (-o is the op here, as in nccl-tests; the output file is --out)",
    ),
    root: int = typer.Option(0, "-r", "--root", help="root rank of broadcast and reduce"),
    iters: int | None = typer.Option(None, "-n", "--iters", min=1, help="iterations per timed batch"),
    warmup: int = typer.Option(5, "-w", "--warmup", min=0, help="warm-up iterations per size"),
    batches: int | None = typer.Option(None, "--batches", min=1, help="timed batches per size (fixed mode)"),
    precision: str | None = typer.Option(
        None,
        "--precision",
        help="adaptive mode: run batches until the mean time is known within this (95% CI), e.g. 1%",
    ),
    budget: float = typer.Option(2.0, "--budget", min=0.001, help="adaptive mode: seconds per size"),
    graph: bool = typer.Option(False, "--graph", help="replay each batch as a CUDA graph (GPU only)"),
    check: bool = typer.Option(True, "--check/--no-check", help="verify results (#wrong)"),
    ranks: int | None = typer.Option(None, "--ranks", help="ranks (default: all GPUs, or 4 on CPU)"),
    backend: str | None = typer.Option(None, "--backend", help="torch.distributed backend (nccl, gloo, ...)"),
    average: str = typer.Option("avg", "-a", "--average", help="reduce time across ranks: avg, min, max"),
    out: Path | None = typer.Option(None, "--out", help="also write the final JSON result here"),
    fmt: str = typer.Option("table", "--format", help="table, json, csv or markdown"),
    label: str = typer.Option("bench", "--label", help="name of this run in tables and run dir"),
    run_dir: Path | None = typer.Option(None, "--run-dir", help="default: runs/<timestamp>-<label>/"),
    env: list[str] = typer.Option(
        [], "--env", help="NAME=VALUE passed to every rank, or NAME: its value here (repeatable)"
    ),
    timeout: float | None = typer.Option(None, "--timeout", min=1, help="stop the whole job after seconds"),
    timeout_stage: str | None = typer.Option(
        None,
        "--timeout-stage",
        help="seconds per stage, e.g. init=120,size=60 (launch, rendezvous, init, first, size, finish, "
        "total); see docs/reliability.md",
    ),
    progress: bool | None = typer.Option(None, "--progress/--no-progress", help="progress bar on stderr"),
    verbose: bool = typer.Option(False, "-v", "--verbose", help="show the ranks' output on stderr"),
    ab: bool = typer.Option(False, "--ab", help="run with the fabric on and off; print speed-up + verdict"),
    rounds: int = typer.Option(2, "--rounds", help="--ab: on/off rounds, ABBA order (2 = on,off,off,on)"),
    instance_type: str | None = typer.Option(
        None,
        "--instance-type",
        help="--ab: shape whose fabric is switched (default: NVLink/PCIe here); --self-test: this node's "
        "shape, for the catalog's expected figures",
    ),
    on: str = typer.Option(
        "local", "--on", help="launcher: local, mpirun, slurm (kubernetes, skypilot: --dry-run)"
    ),
    hosts: list[str] = typer.Option([], "--hosts", help="mpirun: HOST[:SLOTS], comma-separated or repeated"),
    hostfile: Path | None = typer.Option(None, "--hostfile", help="mpirun: OpenMPI hostfile"),
    mpirun: str = typer.Option("mpirun", "--mpirun", help="mpirun: the mpirun to use"),
    engine: str = typer.Option(
        "gpufabric",
        "--engine",
        help="gpufabric (NCCL called directly on GPUs, torch.distributed on CPU), nccl, torch or nccl-tests",
    ),
    nccl_lib: Path | None = typer.Option(
        None, "--nccl-lib", help="nccl engine: the libnccl.so.2 to load (default: LD_LIBRARY_PATH, system)"
    ),
    virtual_nodes: int = typer.Option(
        0,
        "--virtual-nodes",
        min=0,
        help="local, mpirun: split this host's ranks into N NCCL nodes (NCCL_HOSTID each)",
    ),
    mps: bool = typer.Option(False, "--mps", help="--virtual-nodes: run an MPS daemon for the job"),
    self_test: bool = typer.Option(
        False,
        "--self-test",
        help="one-node fabric self-test: two virtual nodes of half the GPUs each, NCCL's inter-node path "
        "through this node's NICs (see docs/engines.md: what it proves and what it cannot)",
    ),
    nccl_tests_dir: Path | None = typer.Option(
        None, "--nccl-tests-dir", help="nccl-tests: directory of the *_perf binaries (build/)"
    ),
    gpus_per_node: int | None = typer.Option(
        None, "--gpus-per-node", min=1, help="nccl-tests: GPUs per node (default: this host's)"
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help="print the launch plan (redacted); run nothing"),
    image: str | None = typer.Option(None, "--image", help="kubernetes: container image for the pods"),
) -> None:
    """Measure NCCL collectives like nccl-tests (size, count, time, algbw, busbw, #wrong)."""
    from gpufabric.cli import bench_modes

    choice("--engine", engine, bench_modes.ENGINES)
    if self_test:
        virtual_nodes, mps, ranks = bench_modes.self_test_shape(virtual_nodes, mps, ranks, on, instance_type)
    if ab and engine not in ("gpufabric", "nccl", "torch"):
        raise UsageError(
            "--ab: runs on the gpufabric engine only; drop --engine nccl-tests, or compare two nccl-tests "
            "runs with `gpufabric compare ON.json OFF.json`"
        )
    if ab and dry_run:
        raise UsageError("--dry-run: prints one job's plan; drop --ab (the A/B runs that job per side)")
    if instance_type is not None and not (ab or self_test):
        raise UsageError(
            "--instance-type: only --ab uses it (and --self-test); add one of them or drop --instance-type"
        )
    if ab:
        choice("--format", fmt, ("table", "markdown", "json"))
    choice("--format", fmt, FORMATS)
    choice("-a/--average", average, ("avg", "min", "max"))
    # Output paths are checked before anything runs, whatever the mode: a sweep must not end in a
    # traceback because --out names a directory.
    if out is not None:
        check_output_file(out)
    if run_dir is not None:
        check_fresh_run_dir(run_dir.resolve())
    extra_env = parse_env_pairs(env)
    if nccl_lib is not None:
        if engine in ("torch", "nccl-tests"):
            raise UsageError(
                f"--nccl-lib: the nccl engine's; drop it with --engine {engine} (set LD_LIBRARY_PATH)"
            )
        extra_env["GPUFABRIC_NCCL_LIB"] = str(nccl_lib.resolve())
    backend = normalize_backend(backend)
    wants_cpu = backend not in (None, "nccl")
    on_gpu = visible_gpu_count({**os.environ, **extra_env}) > 0 and not wants_cpu
    defaults = GPU_DEFAULTS if on_gpu else CPU_DEFAULTS
    if engine == "nccl-tests":
        defaults = NCCL_TESTS_DEFAULTS
    low = parse_size(min_bytes or str(defaults["min"]), flag="-b/--min-bytes")
    high = parse_size(max_bytes or str(defaults["max"]), flag="-e/--max-bytes")
    config = BenchConfig(
        collectives=collective,
        min_bytes=low,
        max_bytes=high,
        step_factor=step_factor
        if step_factor is not None
        else default_step(low, high, int(defaults["factor"])),
        dtype=dtype,
        op=op,
        root=root,
        iters=iters if iters is not None else int(defaults["iters"]),
        warmup=warmup,
        batches=batches if batches is not None else int(defaults["batches"]),
        precision=parse_precision(precision) if precision is not None else None,
        budget_s=budget,
        graph=graph,
        check=check,
        time_reduction=average,
        backend=backend,
        label=label,
        run_dir=run_dir or Path("runs"),
        command=["gpufabric", *sys.argv[1:]],
        engine="auto" if engine in ("gpufabric", "nccl-tests") else engine,
        virtual_nodes=virtual_nodes,
        mps=mps,
    )
    factory = bench_modes.launcher_factory(
        on, hosts=hosts, hostfile=hostfile, mpirun=mpirun, dry_run=dry_run, image=image,
        virtual_nodes=virtual_nodes, mps=mps,
    )  # fmt: skip
    nodes = bench_modes.host_count(hosts, hostfile)
    ranks_here = on == "local" or (on == "mpirun" and not (hosts or hostfile))
    show = (lambda prefix, line: print(f"{prefix} {line}", file=sys.stderr)) if verbose else None
    if engine != "nccl-tests" and not dry_run:
        bench_modes.ensure_engine(config, on_gpu, for_what=f"gpufabric bench{' --ab' if ab else ''}")
    if ab:
        # Virtual nodes talk through NCCL's network transport on both sides, so the A/B that means
        # something there is the across-nodes one (the net plugin vs NCCL_NET=Socket), not NVLink vs socket.
        run_ab_mode(config, factory, nodes=max(nodes, virtual_nodes), rounds=rounds,
                    instance_type=instance_type, ranks=ranks, env=extra_env, timeout=timeout,
                    show=show, fmt=fmt, out=out, attest=_attester())  # fmt: skip
        return
    if engine == "nccl-tests":
        from gpufabric.cli import bench_nccl_tests

        # With virtual nodes --ranks is mpirun's -np (nccl_tests_layout); otherwise the GPUs decide.
        bench_nccl_tests.refuse_gpufabric_only_flags(
            config, ranks=None if virtual_nodes else ranks, timeout_stage=timeout_stage
        )
        nodes, gpus = bench_modes.nccl_tests_layout(
            on, virtual_nodes=virtual_nodes, ranks=ranks, gpus_per_node=gpus_per_node,
            visible_gpus=visible_gpu_count({**os.environ, **extra_env}), nodes=nodes,
        )  # fmt: skip
        if dry_run:  # print the command lines; run nothing, not even the binaries' --help
            plan_text = bench_nccl_tests.nccl_tests_dry_run(
                config, launcher=factory(), nccl_tests_dir=nccl_tests_dir, nodes=nodes, gpus_per_node=gpus,
                env=extra_env,
            )  # fmt: skip
            typer.echo(plan_text)
            if self_test:
                bench_modes.print_self_test_figures(instance_type, config, None)
            return
        result = bench_nccl_tests.run_nccl_tests_engine(
            config, launcher=factory(), nccl_tests_dir=nccl_tests_dir, nodes=nodes, gpus_per_node=gpus,
            env=extra_env, timeout_s=timeout, on_output=show, out=out,
        )  # fmt: skip
    else:
        from gpufabric.bench.adapt import AdaptedLauncher

        launcher = AdaptedLauncher(factory(), nodes=nodes)
        if dry_run:
            from gpufabric.bench.world import preflight

            # The same checks as a real run, so a plan is never printed for a request it would refuse.
            nranks, chosen, gpu, _fault = preflight(
                config, ranks=ranks, environ={**os.environ, **extra_env}, ranks_here=ranks_here
            )
            program = bench_modes.rank_program(
                config, nranks, gpu, extra_env, launcher=launcher.name, backend=chosen
            )
            typer.echo(bench_modes.dry_run_text(launcher, program))
            if self_test:
                bench_modes.print_self_test_figures(instance_type, config, None)
            return
        from gpufabric.cli.bench_stream import RowPrinter

        # The run directory is fixed now, so the rows can be read back as they come and a stopped run
        # can say where its partial result is.
        config = config.model_copy(update={"run_dir": bench_modes.resolved_run_dir(config)})
        printer = RowPrinter(config.run_dir, fmt, stream=sys.stderr if is_stdout(out or "") else None)
        try:
            with progress_bar(progress, on_row=printer.update) as on_progress:
                result = run_bench(
                    config,
                    launcher=launcher,
                    ranks=ranks,
                    env=extra_env,
                    timeout_s=timeout,
                    stage_timeouts=parse_stage_timeouts(timeout_stage),
                    on_output=show,
                    on_progress=on_progress,
                    attest=_attester(),
                    out=out,
                    ranks_here=ranks_here,
                )
        except CheckFailed as exc:
            # The run finished with wrong data: show its table (kept on disk), then fail with the detail.
            if exc.result_path is not None:
                from gpufabric.results.io import read_result

                printer.finish(render(read_result(exc.result_path), fmt))
            raise
        except (GpufabricError, Interrupted):
            printer.stopped()  # whatever stopped it: what was measured, and where it is kept
            raise
        printer.finish(render(result, fmt))
        if self_test:
            bench_modes.print_self_test_figures(instance_type, config, result)
        _fail_on_wrong(result)
        return
    # ``--out -`` put the JSON document on stdout: the table goes to stderr, so stdout stays one document.
    typer.echo(render(result, fmt), nl=False, err=is_stdout(out or ""))
    if self_test:
        bench_modes.print_self_test_figures(instance_type, config, result)
    _fail_on_wrong(result)


def _fail_on_wrong(result: RunResult) -> None:
    wrong = sum(s.wrong_total or 0 for s in result.series)
    if wrong:
        raise CheckFailed(
            f"--check: {wrong} wrong element(s) in {result.metadata.settings.get('collectives')}"
        )


def _attester() -> Attester | None:
    try:
        from gpufabric.analysis.nccl_log import attest_files
    except ImportError:  # the analysis layer is optional for bench
        return None
    return attest_files


def register(app: typer.Typer) -> None:
    """Add ``gpufabric bench`` to the app."""
    app.command("bench")(bench)
