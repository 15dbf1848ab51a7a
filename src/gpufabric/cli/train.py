"""``gpufabric train-bench``: parse flags, call ``run_train_bench`` or ``run_train_ab``, render.

With no arguments: the tiny model, DDP, every GPU of this host (bf16, NCCL) or 2 CPU ranks (fp32, gloo).
The result table goes to stdout; ``-v`` streams the ranks' output to stderr. No torch is imported here.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import typer

from gpufabric._optional import ensure_installed
from gpufabric.cli._common import choice, parse_env_pairs
from gpufabric.errors import InputError, UsageError
from gpufabric.launch.mpirun import MpirunOptions
from gpufabric.launch.registry import LauncherSettings, check_launcher_name, make_launcher
from gpufabric.outputs import is_stdout
from gpufabric.train.config import MODEL_PRESETS, STRATEGIES, TrainConfig, check_backend, model_spec
from gpufabric.train.render import FORMATS, render


def train_bench(
    model: str = typer.Option("tiny", "--model", help=f"model size: {', '.join(MODEL_PRESETS)}"),
    layers: int | None = typer.Option(None, "--layers", help="override the preset's transformer blocks"),
    hidden: int | None = typer.Option(None, "--hidden", help="override the preset's width (64 per head)"),
    batch_size: int = typer.Option(8, "--batch-size", min=1, help="samples per rank per step"),
    ranks: int | None = typer.Option(None, "--ranks", help="ranks (default: all GPUs, or 2 on CPU)"),
    steps: int = typer.Option(20, "--steps", min=2, help="timed steps (with sync, and as many without)"),
    warmup_steps: int = typer.Option(3, "--warmup-steps", min=1, help="untimed steps first"),
    strategy: str = typer.Option("ddp", "--strategy", help="ddp or fsdp"),
    backend: str | None = typer.Option(
        None, "--backend", help="nccl (GPUs) or gloo (CPU); default: nccl where a rank sees a GPU, else gloo"
    ),
    device: str = typer.Option("auto", "--device", help="auto, cuda or cpu"),
    bucket_mb: float = typer.Option(25.0, "--bucket-mb", min=0.001, help="DDP gradient bucket size (MB)"),
    probe_iters: int = typer.Option(10, "--probe-iters", min=2, help="rounds of the collective probe"),
    scaling: bool = typer.Option(True, "--scaling/--no-scaling", help="time the 1-rank baseline too"),
    ab: bool = typer.Option(False, "--ab", help="run with the fabric on and off; print the speed-up"),
    instance_type: str | None = typer.Option(
        None, "--instance-type", help="shape whose fabric --ab switches (default: this host's NVLink/PCIe)"
    ),
    busbw_from: Path | None = typer.Option(
        None, "--busbw-from", help="predict comm from this bench result's all_reduce busbw (default: probe)"
    ),
    on: str = typer.Option("local", "--on", help="launcher: local, mpirun, slurm"),
    nodes: int = typer.Option(1, "--nodes", min=1, help="nodes (mpirun/slurm) or GPU groups (local)"),
    virtual_nodes: int = typer.Option(
        0, "--virtual-nodes", min=0, help="local: split the ranks into N NCCL nodes (NCCL_HOSTID each)"
    ),
    mps: bool = typer.Option(False, "--mps", help="local, --virtual-nodes: run an MPS daemon for the job"),
    hosts: list[str] = typer.Option([], "--hosts", help="mpirun hosts (host or host:slots), repeatable"),
    out: Path | None = typer.Option(None, "--out", "-o", help="also write the JSON document here"),
    fmt: str = typer.Option("table", "--format", help=f"{', '.join(FORMATS)}"),
    label: str = typer.Option("train", "--label", help="name of this run in tables and the run dir"),
    run_dir: Path | None = typer.Option(None, "--run-dir", help="default: runs/<timestamp>-<label>/"),
    env: list[str] = typer.Option(
        [], "--env", help="NAME=VALUE passed to every rank, or NAME: its value here (repeatable)"
    ),
    timeout: float | None = typer.Option(None, "--timeout", min=1, help="stop each run after seconds"),
    verbose: bool = typer.Option(False, "-v", "--verbose", help="show the ranks' output on stderr"),
    show: Path | None = typer.Option(
        None, "--show", help="print a saved train.json or A/B document (in --format) instead of running"
    ),
) -> None:
    """Train a small transformer data-parallel on synthetic data: samples/s, compute vs comm, busbw fit."""
    from gpufabric.analysis.nccl_log import attest_files
    from gpufabric.train import read_busbw_table, read_train_document, run_train_ab, run_train_bench

    choice("--format", fmt, FORMATS)
    if show is not None:
        if not show.is_file():
            raise InputError(f"--show {show}: no such file; give a train.json or --out document")
        typer.echo(render(read_train_document(show), fmt), nl=False)
        return
    choice("--strategy", strategy, STRATEGIES)
    choice("--device", device, ("auto", "cuda", "cpu"))
    check_launcher_name(on)
    choice("--on", on, ("local", "mpirun", "slurm"))
    check_backend(backend)  # before any rank starts: a third backend would only fail inside them
    ensure_installed("torch", extra="torch", for_what="gpufabric train-bench")
    config = TrainConfig(
        model_name=model,
        model=model_spec(model, layers=layers, hidden=hidden),
        strategy=strategy,
        batch_size=batch_size,
        steps=steps,
        warmup_steps=warmup_steps,
        block=min(5, steps),
        probe_iters=probe_iters,
        scaling=scaling,
        bucket_cap_mb=bucket_mb,
        backend=backend.lower() if backend else None,
        device=device,
        label=label,
        run_dir=run_dir or Path("runs"),
        command=["gpufabric", *sys.argv[1:]],
    )
    busbw = read_busbw_table(busbw_from) if busbw_from is not None else None
    launcher = None
    if (virtual_nodes or mps) and on != "local":
        raise UsageError(f"--virtual-nodes/--mps: the local launcher's; drop them with --on {on}")
    if mps and not virtual_nodes:
        raise UsageError("--mps: for ranks that share a GPU; add --virtual-nodes N or drop --mps")
    if virtual_nodes:
        launcher = make_launcher("local", LauncherSettings(local_virtual_nodes=virtual_nodes, local_mps=mps))
        nodes = virtual_nodes
        if ranks is None:  # at least one rank per virtual node (on one GPU they share it), as bench does
            from gpufabric.bench import visible_gpu_count

            ranks = max(visible_gpu_count(os.environ), virtual_nodes)
    if on != "local":
        launcher = make_launcher(on, LauncherSettings(mpirun=MpirunOptions(hosts=hosts)))
    elif hosts:
        raise UsageError("--hosts: only --on mpirun places ranks on hosts; add --on mpirun or drop --hosts")
    common = {
        "launcher": launcher,
        "ranks": ranks,
        "nodes": nodes,
        "timeout_s": timeout,
        "on_output": (lambda prefix, line: print(f"{prefix} {line}", file=sys.stderr)) if verbose else None,
        "busbw": busbw,
        "busbw_source": str(busbw_from) if busbw_from else "probe",
        "attest": attest_files,
    }
    if ab:
        from gpufabric.planner import ab_profiles

        profiles = ab_profiles(nodes=nodes, instance_type=instance_type)
        document = run_train_ab(config, profiles, env=parse_env_pairs(env), out=out, **common)
        typer.echo(render(document, fmt), nl=False, err=is_stdout(out or ""))  # --out -: JSON on stdout
        return
    if instance_type is not None:
        raise UsageError("--instance-type: only --ab uses it; add --ab or drop --instance-type")
    result = run_train_bench(config, env=parse_env_pairs(env), out=out, **common)  # type: ignore[arg-type]
    typer.echo(render(result, fmt), nl=False, err=is_stdout(out or ""))


def register(app: typer.Typer) -> None:
    """Add ``gpufabric train-bench`` to the app."""
    app.command("train-bench")(train_bench)
