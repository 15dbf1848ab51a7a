"""``gpufabric bench``: parse nccl-tests-style flags into a ``BenchRequest`` and an ``Execution``, hand them
to ``gpufabric.jobs`` (``prepare_bench`` then ``run_bench_job``), render the result.

With no arguments: every GPU of this host, one process each, NCCL; with no GPU, 4 CPU ranks on gloo
with small sizes, so it runs anywhere. The table goes to stdout; the progress bar to stderr (only on a
terminal, or with ``--progress``).

``--on mpirun|slurm [--hosts|--hostfile]`` runs the same ranks through another launcher and produces the
same result document; ``--engine nccl-tests`` runs NVIDIA's binaries instead of our engine; ``--ab`` runs
the sweep with the fabric on and off (``gpufabric.jobs.prepare_ab`` then ``run_ab_job``) and prints the
speed-up table and verdict. ``--dry-run`` prints the plan ``prepare_bench`` returned (with ``--ab``, every
job's plan ``prepare_ab`` returned), which is the one a run executes (and records as ``plan.json`` in its
run directory). Where the ranks run is ``launch.placement``'s; the checks
of ``--out``/``--run-dir``, ``--self-test``'s shape, the NCCL attester and when wrong data fails the
command are ``gpufabric.jobs``'; the dry-run text is ``gpufabric.report``'s (``render_document``). Flags
that cannot go together and the streamed table are in ``cli/bench_modes.py``; ``--ab``'s rendering in
``cli/bench_ab.py``; the progress bar in ``cli/bench_output.py``. After the table, each collective's
``expected:`` line judges the run against what its hardware should reach (this node's shape, read from it;
``--instance-type`` or ``--snapshot`` name another), ``gpufabric.analysis.expected``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import typer

from gpufabric.boundary_names import NCCL_LIB_ENV
from gpufabric.cli._common import choice, parse_env_pairs
from gpufabric.options import AB_ROUNDS, BENCH_DEFAULTS, PLACEMENT_DEFAULTS
from gpufabric.report import AB_FORMATS, RUN_FORMATS, Format


def bench(
    collective: list[str] = typer.Option(
        BENCH_DEFAULTS.collectives,
        "-c",
        "--collective",
        help="all_reduce, all_gather, reduce_scatter, alltoall, broadcast, reduce, sendrecv, or all "
        "(repeat or comma-separate)",
    ),
    min_bytes: str | None = typer.Option(None, "-b", "--min-bytes", help="smallest size (8, 1K, 2G)"),
    max_bytes: str | None = typer.Option(None, "-e", "--max-bytes", help="largest size"),
    step_factor: int | None = typer.Option(None, "-f", "--step-factor", help="size multiplier per step"),
    dtype: str = typer.Option(
        BENCH_DEFAULTS.dtype, "-d", "--dtype", help="float, half, bfloat16, double, int8, ..."
    ),
    op: str = typer.Option(
        BENCH_DEFAULTS.op,
        "-o",
        "--op",
        help="sum, prod, max, min, avg (-o as in nccl-tests; an output file is --out in every command)",
    ),
    root: int = typer.Option(BENCH_DEFAULTS.root, "-r", "--root", help="root rank of broadcast and reduce"),
    iters: int | None = typer.Option(None, "-n", "--iters", min=1, help="iterations per timed batch"),
    warmup: int = typer.Option(
        BENCH_DEFAULTS.warmup, "-w", "--warmup", min=0, help="warm-up iterations per size"
    ),
    batches: int | None = typer.Option(None, "--batches", min=1, help="timed batches per size (fixed mode)"),
    precision: str | None = typer.Option(
        None,
        "--precision",
        help="adaptive mode: run batches until the mean time is known within this (95% CI), e.g. 1%",
    ),
    budget: float = typer.Option(
        BENCH_DEFAULTS.budget_s, "--budget", min=0.001, help="adaptive mode: seconds per size"
    ),
    graph: bool = typer.Option(
        BENCH_DEFAULTS.graph, "--graph", help="replay each batch as a CUDA graph (GPU only)"
    ),
    per_iteration: bool = typer.Option(
        BENCH_DEFAULTS.per_iteration,
        "--per-iteration",
        help="time every iteration too (nccl-tests -I): i_min, i_max, i_p99, i_cv% columns, and the rank "
        "the others waited for",
    ),
    check: bool = typer.Option(BENCH_DEFAULTS.check, "--check/--no-check", help="verify results (#wrong)"),
    ranks: int | None = typer.Option(None, "--ranks", help="ranks (default: all GPUs, or 4 on CPU)"),
    backend: str | None = typer.Option(None, "--backend", help="torch.distributed backend (nccl, gloo, ...)"),
    average: str = typer.Option(
        BENCH_DEFAULTS.average, "-a", "--average", help="reduce time across ranks: avg, min, max"
    ),
    out: Path | None = typer.Option(None, "--out", help="also write the final JSON result here"),
    fmt: str = typer.Option("table", "--format", help="table, json, csv or markdown"),
    label: str = typer.Option(BENCH_DEFAULTS.label, "--label", help="name of this run in tables and run dir"),
    run_dir: Path | None = typer.Option(
        None, "--run-dir", help=f"default: {BENCH_DEFAULTS.run_dir}/<timestamp>-<label>/"
    ),
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
    rounds: int = typer.Option(
        AB_ROUNDS, "--rounds", help="--ab: on/off rounds, ABBA order (2 = on,off,off,on)"
    ),
    ab_a: list[str] = typer.Option(
        [],
        "--ab-a",
        help=f"--ab of two configurations: side A's NAME=VALUE (repeatable; e.g. {NCCL_LIB_ENV}=PATH)",
    ),
    ab_b: list[str] = typer.Option(
        [],
        "--ab-b",
        help="--ab of two configurations: side B's NAME=VALUE; verdict: B no slower than 2% (95%)",
    ),
    ab_names: str | None = typer.Option(
        None,
        "--ab-names",
        help="--ab-a/--ab-b: the two sides' names in run directories, files and tables (default A,B), "
        "e.g. nccl-2.28.9,nccl-2.31.2",
    ),
    instance_type: str | None = typer.Option(
        None,
        "--instance-type",
        help="catalog shape to judge the result against (default: this node's, read from it); --ab: also "
        "the fabric that is switched; --self-test: also the catalog's 2-node figures",
    ),
    snapshot: Path | None = typer.Option(
        None,
        "--snapshot",
        help="node snapshot JSON (`gpufabric snapshot --out FILE`) to judge the result against instead of "
        "this node",
    ),
    on: str = typer.Option(
        PLACEMENT_DEFAULTS.on, "--on", help="launcher: local, mpirun, slurm (kubernetes, skypilot: --dry-run)"
    ),
    hosts: list[str] = typer.Option([], "--hosts", help="mpirun: HOST[:SLOTS], comma-separated or repeated"),
    hostfile: Path | None = typer.Option(None, "--hostfile", help="mpirun: OpenMPI hostfile"),
    mpirun: str = typer.Option(PLACEMENT_DEFAULTS.mpirun, "--mpirun", help="mpirun: the mpirun to use"),
    engine: str = typer.Option(
        BENCH_DEFAULTS.engine,
        "--engine",
        help="gpufabric (NCCL called directly on GPUs, torch.distributed on CPU), nccl, torch or nccl-tests",
    ),
    nccl_lib: Path | None = typer.Option(
        None, "--nccl-lib", help="nccl engine: the libnccl.so.2 to load (default: LD_LIBRARY_PATH, system)"
    ),
    virtual_nodes: int = typer.Option(
        BENCH_DEFAULTS.virtual_nodes,
        "--virtual-nodes",
        min=0,
        help="local, mpirun: split this host's ranks into N NCCL nodes (NCCL_HOSTID each)",
    ),
    mps: bool = typer.Option(
        BENCH_DEFAULTS.mps, "--mps", help="--virtual-nodes: run an MPS daemon for the job"
    ),
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
    # Imported when the command runs, not when `gpufabric --help` lists it (benchmarks/import_time.py);
    # what only --ab, --dry-run or a given shape needs is imported there: every import here delays the
    # ranks' start (issue 36).
    from gpufabric.bench import parse_stage_timeouts
    from gpufabric.cli import bench_modes
    from gpufabric.jobs import ENGINES, BenchRequest, Execution, bench_failure, prepare_bench, self_test_shape
    from gpufabric.launch import placement

    choice("--engine", engine, ENGINES)
    if self_test:
        virtual_nodes, mps, ranks = self_test_shape(
            virtual_nodes, mps, ranks, on, instance_type, environ=os.environ
        )
        bench_modes.print_self_test_note()
    bench_modes.refuse_flag_combinations(ab=ab, engine=engine, configs=bool(ab_a or ab_b or ab_names))
    choice("--format", fmt, AB_FORMATS if ab else RUN_FORMATS)
    given = bench_modes.given_shape_of(instance_type, snapshot)
    request = BenchRequest(
        collectives=collective, min_bytes=min_bytes, max_bytes=max_bytes, step_factor=step_factor,
        dtype=dtype, op=op, root=root, iters=iters, warmup=warmup, batches=batches, precision=precision,
        budget_s=budget, graph=graph, per_iteration=per_iteration, check=check, backend=backend,
        average=average, label=label, run_dir=run_dir or BENCH_DEFAULTS.run_dir, engine=engine,
        nccl_lib=nccl_lib, virtual_nodes=virtual_nodes, mps=mps, nccl_tests_dir=nccl_tests_dir,
        gpus_per_node=gpus_per_node,
    )  # fmt: skip
    where = placement(
        on, hosts=hosts, hostfile=hostfile, mpirun=mpirun, dry_run=dry_run, image=image,
        virtual_nodes=virtual_nodes, mps=mps,
    )  # fmt: skip
    execution = Execution(
        launcher=where.launcher,
        nodes=where.nodes,
        ranks=ranks,
        env=parse_env_pairs(env),
        timeout_s=timeout,
        stage_timeouts=parse_stage_timeouts(timeout_stage) if timeout_stage is not None else None,
        ranks_here=where.ranks_here,
        out=out,
        on_output=(lambda prefix, line: print(f"{prefix} {line}", file=sys.stderr)) if verbose else None,
    )
    if ab:
        from gpufabric.cli.bench_ab import show_ab
        from gpufabric.jobs import prepare_ab
        from gpufabric.planner import side_names
        from gpufabric.report import render_document

        sides = (parse_env_pairs(ab_a), parse_env_pairs(ab_b)) if ab_a or ab_b else None
        names = side_names(ab_names) if ab_names is not None else None
        prepared_ab = prepare_ab(
            request, execution, rounds=rounds, instance_type=instance_type, sides=sides, side_names=names
        )
        if dry_run:  # every job's plan, in the order the A/B runs them; nothing started, nothing written
            typer.echo(render_document(prepared_ab, Format.TEXT), nl=False)
            return
        show_ab(prepared_ab, fmt=fmt, given=given)
        return
    prepared = prepare_bench(request, execution)
    if dry_run:  # exactly the plan a run of this request executes; nothing started, nothing written
        from gpufabric.report import render_document

        typer.echo(render_document(prepared, Format.TEXT), nl=False)
        if self_test:
            bench_modes.print_self_test_figures(instance_type, prepared.config, None)
        return
    result = bench_modes.run_and_show(prepared, fmt=fmt, progress=progress, out=out, given=given)
    if self_test:
        bench_modes.print_self_test_figures(instance_type, prepared.config, result)
    failure = bench_failure(result)
    if failure is not None:
        raise failure


def register(app: typer.Typer) -> None:
    """Add ``gpufabric bench`` to the app."""
    app.command("bench")(bench)
