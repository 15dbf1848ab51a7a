"""The train-bench mode (``gpufabric train-bench``): ``prepare_train(request, execution)`` decides
everything (pure: the checks, the run directories, the rank program and launch plan of each run) and
``run_train_job(prepared)`` executes exactly that, returning one document: a ``TrainResult``, or with
``--ab`` a ``TrainAB`` (the fabric on and off in ABBA rounds, as ``bench --ab`` orders them;
``train-ab.json`` in the A/B's root, each job in ``<root>/r<round>-<side>``). ``--dry-run``
prints ``prepared.plans``; every run records the plan it executed (``plan.json`` in its run directory).

One run's harness is ``train.runner``; the A/B's sides and document are ``train.ab``'s.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from gpufabric.bench.ab import MAX_ROUNDS, OFF_LABEL, ON_LABEL, round_order
from gpufabric.bench.execution import Execution, LauncherFactory
from gpufabric.bench.run_setup import default_run_dir
from gpufabric.boundary_names import RUNS_ROOT
from gpufabric.errors import UsageError, choice
from gpufabric.jobs.bench import with_attester
from gpufabric.launch.base import LaunchPlan
from gpufabric.launch.dry_run import DryRun, DryRunJob
from gpufabric.launch.factory import Placement
from gpufabric.options import TrainOptions
from gpufabric.planner.ab import ABProfiles
from gpufabric.train.ab import AB_DOCUMENT_NAME, ab_document, side_config
from gpufabric.train.config import DEVICES, STRATEGIES, TrainConfig, check_backend, model_spec
from gpufabric.train.model_shape import AUTO_MODEL, PRESET_BATCH, default_model
from gpufabric.train.result import TrainDocument, write_train_document
from gpufabric.train.runner import PreparedTrainRun, prepare_train_run, run_train_run


class TrainRequest(TrainOptions):
    """One ``gpufabric train-bench`` request: its fields and defaults are ``options.TrainOptions``."""

    def train_config(self, *, on_gpu: bool) -> TrainConfig:
        """The ``TrainConfig`` every rank reads (``--model auto``: the GPU or the CPU default, as
        ``on_gpu`` says); one-line ``UsageError`` for a choice it cannot take."""
        import sys

        choice("--strategy", self.strategy, STRATEGIES)
        choice("--device", self.device, DEVICES)
        check_backend(self.backend)  # before any rank starts: a third backend would only fail inside them
        name = self.model
        if name == AUTO_MODEL:
            from gpufabric.bench.world import gpu_memory_bytes

            name = default_model(on_gpu, gpu_memory_bytes() if on_gpu else None)
        return TrainConfig(
            model_name=name,
            model=model_spec(name, layers=self.layers, hidden=self.hidden),
            strategy=self.strategy,  # one of STRATEGIES, checked above
            batch_size=self.batch_size if self.batch_size is not None else PRESET_BATCH[name],
            steps=self.steps,
            warmup_steps=self.warmup_steps,
            block=self.block if self.block is not None else min(5, self.steps),
            probe_iters=self.probe_iters,
            scaling=self.scaling,
            bucket_cap_mb=self.bucket_mb,
            fsdp_prefetch=self.prefetch,
            backend=self.backend.lower() if self.backend else None,
            device=self.device,  # one of DEVICES, checked above
            label=self.label,
            run_dir=self.run_dir,
            command=self.command or ["gpufabric", *sys.argv[1:]],
        )


def train_launcher(
    on: str, *, hosts: list[str] | None = None, virtual_nodes: int = 0, mps: bool = False
) -> LauncherFactory:
    """Where train-bench's ranks run, as a launcher factory (``launch.launcher_factory``'s, so ranks on
    this host get a free rendezvous port). Refuses, in one line, flags that do not go with ``on``:
    train-bench splits virtual nodes with the local launcher only."""
    return train_placement(on, hosts=hosts, virtual_nodes=virtual_nodes, mps=mps).launcher


def train_placement(
    on: str, *, hosts: list[str] | None = None, virtual_nodes: int = 0, mps: bool = False
) -> Placement:
    """``launch.placement`` of train-bench's ``--on``, ``--hosts``, ``--virtual-nodes`` and ``--mps``,
    after train-bench's own refusals (its launchers; virtual nodes on the local launcher only)."""
    from gpufabric.launch import RUNNING_LAUNCHERS, check_launcher_name, launcher_kind, placement

    choice("--on", check_launcher_name(on), RUNNING_LAUNCHERS)  # a misspelt name first gets its hint
    kind = launcher_kind(on)
    # train-bench splits nodes only on the launcher that starts every rank here itself.
    if (virtual_nodes or mps) and not kind.always_here:
        raise UsageError(f"--virtual-nodes/--mps: the local launcher's; drop them with --on {on}")
    if hosts and not kind.takes_hosts:
        raise UsageError("--hosts: only --on mpirun places ranks on hosts; add --on mpirun or drop --hosts")
    return placement(on, hosts=list(hosts or []), hostfile=None, virtual_nodes=virtual_nodes, mps=mps)


@dataclasses.dataclass(frozen=True)
class PreparedTrain:
    """A train-bench job, decided and not started: one run, or the A/B's fabric-on and fabric-off runs
    (in that order) under ``root``, with the ``profiles`` that tell them apart. ``out``: where the A/B's
    document also goes (``--out``; a single run writes its own, its ``execution.out``)."""

    runs: tuple[PreparedTrainRun, ...]
    order: tuple[tuple[int, str], ...] = ()
    profiles: ABProfiles | None = None
    root: Path | None = None
    out: Path | None = None

    @property
    def plans(self) -> list[LaunchPlan]:
        """The launch plans the job executes, in order: what ``--dry-run`` prints."""
        return [run.plan for run in self.runs]

    def dry_run(self) -> DryRun:
        """The plan of each run (with ``--ab``: on and off in ABBA rounds)."""
        return DryRun(notes=[], jobs=[DryRunJob({"label": run.config.label}, run.plan) for run in self.runs])


def prepare_train(request: TrainRequest, execution: Execution) -> PreparedTrain:
    """Every decision of one train-bench job, nothing started, nothing written."""
    from gpufabric.bench.rundir import check_output_file

    execution = _virtual_nodes(request, with_attester(execution))
    config = request.train_config(on_gpu=ranks_on_gpu(request, execution))
    if request.ab:
        from gpufabric.planner import ab_profiles

        # Virtual nodes talk through NCCL's network transport: there the A/B is the across-nodes one.
        profiles: ABProfiles | None = ab_profiles(nodes=execution.nodes, instance_type=request.instance_type)
        if not 1 <= request.rounds <= MAX_ROUNDS:
            raise UsageError(
                f"--rounds: {request.rounds} is out of range; choose 1..{MAX_ROUNDS} (2 = on,off,off,on)"
            )
    elif request.instance_type is not None:
        raise UsageError("--instance-type: only --ab uses it; add --ab or drop --instance-type")
    else:
        profiles = None
    busbw = None
    if request.busbw_from is not None:
        from gpufabric.train.predict import read_busbw_table

        busbw = read_busbw_table(request.busbw_from)
    if execution.out is not None:
        check_output_file(execution.out)  # before the job, not after it
    source = str(request.busbw_from) if request.busbw_from else "probe"
    if profiles is None:
        run = prepare_train_run(config, execution, busbw=busbw, busbw_source=source)
        return PreparedTrain(runs=(run,))
    root = default_run_dir(config.label) if config.run_dir == RUNS_ROOT else config.run_dir
    sides = {ON_LABEL: profiles.on, OFF_LABEL: profiles.off}
    order = tuple(round_order(request.rounds))
    runs = tuple(
        prepare_train_run(
            side_config(config, sides[side], run_dir=root / f"r{index}-{side}", first=number == 0),
            execution.replace(env=sides[side].apply(dict(execution.env)), out=None),
            busbw=busbw,
            busbw_source=source,
        )
        for number, (index, side) in enumerate(order)
    )
    return PreparedTrain(runs=runs, order=order, profiles=profiles, root=root, out=execution.out)


def ranks_on_gpu(request: TrainRequest, execution: Execution) -> bool:
    """Whether the ranks will train on GPUs, for ``--model auto``: as ``--device``/``--backend`` say, else
    whether this host sees a GPU (a remote launcher's ranks are taken to be like this host; pass
    ``--device cuda`` from a login node without GPUs)."""
    backend = (request.backend or "").lower()
    if request.device == "cpu" or backend == "gloo":
        return False
    if request.device == "cuda" or backend == "nccl":
        return True
    from gpufabric.bench.world import visible_gpu_count

    return visible_gpu_count({**execution.base_environ(), **execution.env}) > 0


def _virtual_nodes(request: TrainRequest, execution: Execution) -> Execution:
    """``execution`` with ``request``'s virtual nodes: one NCCL node each, at least one rank per virtual
    node (on one GPU they share it, as bench does), the local launcher that splits them."""
    if not request.virtual_nodes:
        return execution
    from gpufabric.bench.world import visible_gpu_count

    ranks = execution.ranks
    if ranks is None:
        gpus = visible_gpu_count({**execution.base_environ(), **execution.env})
        ranks = max(gpus, request.virtual_nodes)
    launcher = execution.launcher or train_launcher(
        "local", virtual_nodes=request.virtual_nodes, mps=request.mps
    )
    return execution.replace(nodes=request.virtual_nodes, ranks=ranks, launcher=launcher)


def run_train_job(prepared: PreparedTrain) -> TrainDocument:
    """Run ``prepared`` as it is and return its document (also written to ``--out`` when given)."""
    from gpufabric._optional import ensure_installed

    # Refused before a rank starts (each would die on the import), after a dry run that needs no torch.
    ensure_installed("torch", extra="torch", for_what="gpufabric train-bench")
    results = [run_train_run(run) for run in prepared.runs]
    if prepared.profiles is None or prepared.root is None:
        return results[0]
    jobs = [(index, side, result) for (index, side), result in zip(prepared.order, results, strict=True)]
    document = ab_document(prepared.profiles, jobs)
    write_train_document(document, prepared.root / AB_DOCUMENT_NAME)
    if prepared.out is not None:
        write_train_document(document, prepared.out)
    return document
