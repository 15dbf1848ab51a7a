"""``gpufabric train-bench``: parse flags into a ``TrainRequest`` and an ``Execution``, hand them to
``gpufabric.jobs`` (``prepare_train`` then ``run_train_job``), render the document (``report.render_train``).

With no arguments: DDP on every GPU of this host with the GPU default model (``gpt-760m``, bf16, NCCL),
or on 2 CPU ranks with the tiny model (fp32, gloo). ``--ab`` runs it with the fabric on and off in ABBA
rounds and prints the speed-up with its interval. ``--dry-run`` prints the plans
``prepare_train`` returned, which are the ones a run executes (and records as ``plan.json`` in each run
directory). The result table goes to stdout; ``-v`` streams the ranks' output to stderr. No torch is
imported here.
"""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from gpufabric.cli._common import choice, parse_env_pairs
from gpufabric.errors import InputError
from gpufabric.options import PLACEMENT_DEFAULTS, TRAIN_DEFAULTS
from gpufabric.report import TRAIN_FORMATS, Format, choices
from gpufabric.train import AUTO_MODEL, CPU_DEFAULT_MODEL, GPU_DEFAULT_MODEL, MODEL_PRESETS

FORMATS: tuple[str, ...] = choices(*TRAIN_FORMATS)


def train_bench(
    model: str = typer.Option(
        AUTO_MODEL,
        "--model",
        help=f"model: {', '.join(MODEL_PRESETS)}; {AUTO_MODEL}: {GPU_DEFAULT_MODEL} on GPUs, "
        f"{CPU_DEFAULT_MODEL} on CPU",
    ),
    layers: int | None = typer.Option(None, "--layers", help="override the preset's transformer blocks"),
    hidden: int | None = typer.Option(None, "--hidden", help="override the preset's width (64 per head)"),
    batch_size: int | None = typer.Option(
        None, "--batch-size", min=1, help="samples per rank per step (default: the model's, 2-8)"
    ),
    ranks: int | None = typer.Option(None, "--ranks", help="ranks (default: all GPUs, or 2 on CPU)"),
    steps: int = typer.Option(
        TRAIN_DEFAULTS.steps, "--steps", min=2, help="timed steps (with sync, and as many without)"
    ),
    warmup_steps: int = typer.Option(
        TRAIN_DEFAULTS.warmup_steps, "--warmup-steps", min=1, help="untimed steps first"
    ),
    strategy: str = typer.Option(TRAIN_DEFAULTS.strategy, "--strategy", help="ddp or fsdp"),
    backend: str | None = typer.Option(
        None, "--backend", help="nccl (GPUs) or gloo (CPU); default: nccl where a rank sees a GPU, else gloo"
    ),
    device: str = typer.Option(TRAIN_DEFAULTS.device, "--device", help="auto, cuda or cpu"),
    bucket_mb: float = typer.Option(
        TRAIN_DEFAULTS.bucket_mb, "--bucket-mb", min=0.001, help="DDP gradient bucket size (MB)"
    ),
    prefetch: bool = typer.Option(
        TRAIN_DEFAULTS.prefetch,
        "--prefetch/--no-prefetch",
        help="fsdp: explicit prefetch of the next block (off: FSDP2's own)",
    ),
    probe_iters: int = typer.Option(
        TRAIN_DEFAULTS.probe_iters, "--probe-iters", min=2, help="rounds of the collective probe"
    ),
    scaling: bool = typer.Option(
        TRAIN_DEFAULTS.scaling, "--scaling/--no-scaling", help="time the 1-rank baseline too"
    ),
    ab: bool = typer.Option(
        TRAIN_DEFAULTS.ab, "--ab", help="run with the fabric on and off; print the speed-up"
    ),
    rounds: int = typer.Option(
        TRAIN_DEFAULTS.rounds, "--rounds", help="--ab: on/off rounds, ABBA order (2 = on,off,off,on)"
    ),
    instance_type: str | None = typer.Option(
        None, "--instance-type", help="shape whose fabric --ab switches (default: this host's NVLink/PCIe)"
    ),
    busbw_from: Path | None = typer.Option(
        None, "--busbw-from", help="predict comm from this bench result's all_reduce busbw (default: probe)"
    ),
    on: str = typer.Option(PLACEMENT_DEFAULTS.on, "--on", help="launcher: local, mpirun, slurm"),
    nodes: int = typer.Option(1, "--nodes", min=1, help="nodes (mpirun/slurm) or GPU groups (local)"),
    virtual_nodes: int = typer.Option(
        TRAIN_DEFAULTS.virtual_nodes,
        "--virtual-nodes",
        min=0,
        help="local: split the ranks into N NCCL nodes (NCCL_HOSTID each)",
    ),
    mps: bool = typer.Option(
        TRAIN_DEFAULTS.mps, "--mps", help="local, --virtual-nodes: run an MPS daemon for the job"
    ),
    hosts: list[str] = typer.Option([], "--hosts", help="mpirun hosts (host or host:slots), repeatable"),
    out: Path | None = typer.Option(None, "--out", help="also write the JSON document here"),
    fmt: str = typer.Option("table", "--format", help=f"{', '.join(FORMATS)}"),
    label: str = typer.Option(
        TRAIN_DEFAULTS.label, "--label", help="name of this run in tables and the run dir"
    ),
    run_dir: Path | None = typer.Option(
        None, "--run-dir", help=f"default: {TRAIN_DEFAULTS.run_dir}/<timestamp>-<label>/"
    ),
    env: list[str] = typer.Option(
        [], "--env", help="NAME=VALUE passed to every rank, or NAME: its value here (repeatable)"
    ),
    timeout: float | None = typer.Option(None, "--timeout", min=1, help="stop each run after seconds"),
    verbose: bool = typer.Option(False, "-v", "--verbose", help="show the ranks' output on stderr"),
    show: Path | None = typer.Option(
        None, "--show", help="print a saved train.json or A/B document (in --format) instead of running"
    ),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="print the launch plan of each run (redacted); run nothing"
    ),
) -> None:
    """Train a GPT-style model data-parallel on synthetic data: tokens/s, MFU, exposed comm vs busbw."""
    # Imported when the command runs, not when `gpufabric --help` lists it (benchmarks/import_time.py).
    from gpufabric.jobs import Execution, TrainRequest, prepare_train, run_train_job, train_placement
    from gpufabric.outputs import is_stdout
    from gpufabric.report import render_document, render_train, what_runs
    from gpufabric.train import read_train_document

    output = Format(choice("--format", fmt, FORMATS))
    if show is not None:
        if not show.is_file():
            raise InputError(f"--show {show}: no such file; give a train.json or --out document")
        typer.echo(render_train(read_train_document(show), output), nl=False)
        return
    where = train_placement(on, hosts=hosts, virtual_nodes=virtual_nodes, mps=mps)
    execution = Execution(
        launcher=where.launcher,
        nodes=nodes,  # train-bench's --nodes (mpirun/slurm nodes, or GPU groups on the local launcher)
        ranks=ranks,
        ranks_here=where.ranks_here,
        env=parse_env_pairs(env),
        timeout_s=timeout,
        out=out,
        on_output=(lambda prefix, line: print(f"{prefix} {line}", file=sys.stderr)) if verbose else None,
    )
    request = TrainRequest(
        model=model, layers=layers, hidden=hidden, batch_size=batch_size, steps=steps,
        warmup_steps=warmup_steps, strategy=strategy, backend=backend, device=device, bucket_mb=bucket_mb,
        prefetch=prefetch,
        probe_iters=probe_iters, scaling=scaling, ab=ab, rounds=rounds, instance_type=instance_type,
        busbw_from=busbw_from,
        virtual_nodes=virtual_nodes, mps=mps, label=label, run_dir=run_dir or TRAIN_DEFAULTS.run_dir,
    )  # fmt: skip
    prepared = prepare_train(request, execution)
    if verbose or dry_run:
        typer.echo(f"# {what_runs(prepared.runs[0])}", err=True)
    if dry_run:  # exactly the plans a run of this request executes; nothing started, nothing written
        typer.echo(render_document(prepared, Format.TEXT), nl=False)
        return
    document = run_train_job(prepared)
    typer.echo(render_train(document, output), nl=False, err=is_stdout(out or ""))  # --out -: JSON on stdout
    from gpufabric.cli.bench_modes import print_saved

    print_saved(prepared.root if prepared.root is not None else prepared.runs[0].config_path.parent)


def register(app: typer.Typer) -> None:
    """Add ``gpufabric train-bench`` to the app."""
    app.command("train-bench")(train_bench)
