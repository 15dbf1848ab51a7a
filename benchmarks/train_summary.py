"""The summary lines of benchmarks/gpu.sh train (issue 37), from the documents its steps left in one folder.

    python3 benchmarks/train_summary.py RUNS_DIR

Reads ``ddp.json``, ``fsdp.json``, ``fsdp-sockets.json`` (train-bench ``--out``), ``ab.json`` (the DDP
``--ab`` document: its fabric-off side is DDP on sockets), ``ref-<strategy>-<ranks>.json`` (the last
line of benchmarks/train_reference.py; ``ref-ddp-1-default-threads.json``: the one-GPU DDP job at torch's
default threads) and ``ddp.wall`` (the default run's wall seconds). Prints one line per run, then one
line per target of the issue, last, each with the numbers it rests on and ``met``, ``MISS`` or (for the
predictions) ``unresolved``: the rule of ``gpufabric.train.resolution``, where the measured value lies
outside +-15% of the prediction but its 95% interval reaches into that band. A document that is missing
is said to be missing, nothing is filled in.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from gpufabric.train import TrainAB, TrainResult, read_train_document
from gpufabric.train.resolution import measured_text, steps_to_resolve, target_status
from gpufabric.train.verdict import agreement_verdict, overlap_rates_text


def _train(path: Path) -> TrainResult | TrainAB | None:
    return read_train_document(path) if path.is_file() else None


def _reference_line(runs: Path, name: str) -> dict[str, object] | None:
    """The reference's JSON line (its last), or None where the job left none."""
    path = runs / f"{name}.json"
    lines = [line for line in path.read_text().splitlines() if line.startswith("{")] if path.is_file() else []
    return dict(json.loads(lines[-1])) if lines else None


def reference_tokens_per_s(runs: Path, strategy: str, ranks: int) -> float | None:
    """The reference loop's tokens/s on ``ranks`` GPUs, or None where its job left no line."""
    line = _reference_line(runs, f"ref-{strategy}-{ranks}")
    return float(str(line["tokens_per_s"])) if line else None


COMM_SHARE_TARGET = 0.10  # issue 37: communication at least 10% of the default run's step
WALL_TARGET_S = 120.0  # the default run completes in under 2 minutes
SCALING_GAP_TARGET = 0.10  # scaling efficiency within 10 points of the reference loop's


def _met(ok: bool) -> str:
    return "met" if ok else "MISS"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def run_line(name: str, result: TrainResult) -> str:
    p = result.prediction
    wire = p.wire_ms if p else None
    share = wire / result.step.mean_ms if wire is not None else None
    head = (
        f"{name}: {result.model_name} x{result.world_size} {result.tokens_per_s:,.0f} tokens/s, step "
        f"{result.step.mean_ms:.1f} ms, comm share {_pct(share)}, MFU {_pct(result.mfu)}, scaling "
        f"{_pct(result.scaling.efficiency if result.scaling else None)}"
    )
    if p is None:
        return head + "; no prediction"
    probe = result.comm.contention
    rates = (
        f", contention {p.contention_ms:.2f} ms: {overlap_rates_text(p, probe)} from {probe.starts_at:.2f} "
        "of backward"
        if probe is not None
        else ""
    )
    if probe is not None and probe.scheduled is not None:
        solo, issued = probe.scheduled.backward_solo_ms, probe.scheduled.issue_host_ms
        against = (
            f"{probe.backward_alone_ms:.2f} alone"
            if solo is None
            else f"{solo:.2f} with the same hooks issuing on each rank's own group; "
            f"{probe.backward_alone_ms:.2f} with none"
        )
        how = "behind a stream gate" if probe.gated else "from Python"
        host = "" if issued is None else f", the hooks' host time at the issue points {issued:.2f} ms ({how})"
        rates += (
            f"; with each bucket issued where the step issues it the backward lost "
            f"{probe.scheduled_compute_lost_ms:.2f} ms ({probe.scheduled.backward_ms:.2f} against "
            f"{against}) and the last call ran {probe.scheduled_tail_ms:.2f} ms past its end{host}"
        )
    # The other reading beside the one judged: the split's end of backward beside DDP's steps back to
    # back, the steps back to back (means, the optimizer included) beside FSDP's split.
    phases = result.phases
    if result.exposed_from == "steps back to back" and phases is not None:
        split = phases.synced_backward.mean_ms - phases.compute_backward.mean_ms
        back_to_back = f"; the split, each step started settled: {split:.2f} ms at the end of backward"
    else:
        back_to_back = (
            f"; back to back: synced {result.step.mean_ms:.2f} / twin {result.compute.mean_ms:.2f} ms "
            f"(difference {result.step.mean_ms - result.compute.mean_ms:.2f} ms, optimizer included)"
        )
    wait = result.rank_wait_ms
    if wait is not None:
        modelled = "in the model" if p.rank_wait_ms is not None else "not in the model: the split's twin"
        back_to_back += f"; waiting for every rank's step +{wait:.2f} ms ({modelled})"
    return (
        f"{head}; exposed measured {measured_text(p)} vs predicted {p.predicted_comm_ms:.2f} ms "
        f"({p.agreement_pct:.0f}%, wire {p.wire_ms:.2f} ms{rates}{_host_path(result)}{_inside(result)}"
        f"{back_to_back}) {target_status(p)}: {agreement_verdict(p)}"
    )


def _inside(result: TrainResult) -> str:
    """The inside-step probe's figures: the blocks' compute and the time between them, synced / twin."""
    probe = result.comm.inside_step
    if probe is None:
        return ""
    return (
        f"; inside the step: blocks' compute synced {probe.synced_blocks_ms:.2f} / twin "
        f"{probe.twin_blocks_ms:.2f} ms (+{probe.compute_slowed_ms:.2f}), between blocks "
        f"{probe.synced_span_ms - probe.synced_blocks_ms:.2f} / "
        f"{probe.twin_span_ms - probe.twin_blocks_ms:.2f} ms "
        f"(+{probe.between_blocks_ms:.2f}), start to end of backward {probe.synced_span_ms:.2f} / "
        f"{probe.twin_span_ms:.2f} ms"
    )


def _host_path(result: TrainResult) -> str:
    """The host-path probe's figures: what the larger-of-two-bounds prediction rests on."""
    p, host = result.prediction, result.comm.host_path
    if p is None or host is None or p.comm_exposed_ms is None or p.host_bound_ms is None:
        return ""
    return (
        f"; bounds: communication {p.comm_exposed_ms:.2f} ms, host path {p.host_bound_ms:.2f} ms (issue to "
        f"end of backward: synced {host.synced_host_ms:.2f} / twin {host.twin_host_ms:.2f} ms on the host, "
        f"{host.synced_device_ms:.2f} / {host.twin_device_ms:.2f} ms on the device, one step after a sync)"
    )


def target_line(name: str, result: TrainResult) -> str:
    """The prediction target alone, for the closing lines: measured (95% interval) vs predicted, the bound
    that set it, and met / MISS / unresolved (``train.resolution``)."""
    p = result.prediction
    if p is None:
        return f"predicted vs measured exposed comm, {name}: no prediction (MISS)"
    bound = ""
    if p.comm_exposed_ms is not None and p.host_bound_ms is not None:
        which = "host path" if p.host_bound_ms > p.comm_exposed_ms else "communication"
        bound = f", set by {which} (communication {p.comm_exposed_ms:.2f}, host path {p.host_bound_ms:.2f})"
    status = target_status(p)
    # Recomputed from the samples, so a document written before the figure was recorded gets it too.
    needed = steps_to_resolve(p, result.exposed_samples())
    why = (
        f"; the 95% interval reaches into the +-15% band: at this run's per-step noise at least ~{needed} "
        "steps a side would narrow it off the band (then MISS), if the steps' noise is independent"
        if needed
        else ""
    )
    return (
        f"predicted vs measured exposed comm, {name}: measured {measured_text(p)}, predicted "
        f"{p.predicted_comm_ms:.2f} ms{bound}: {p.agreement_pct:.0f}% (target 85-115%: {status}{why})"
    )


def default_line(result: TrainResult | None, runs: Path) -> str:
    """The default run's two targets: under 2 minutes, communication at least 10% of the step."""
    wall_file = runs / "ddp.wall"
    wall = float(wall_file.read_text()) if wall_file.is_file() else None
    if result is None or result.prediction is None or wall is None:
        return "default run (DDP NVLink): missing"
    share = result.prediction.wire_ms / result.step.mean_ms
    return (
        f"default run {result.model_name} batch {result.batch_size} x{result.world_size}: wall {wall:.1f} s "
        f"(target < {WALL_TARGET_S:.0f} s: {_met(wall < WALL_TARGET_S)}), comm share {_pct(share)} "
        f"(wire {result.prediction.wire_ms:.2f} / step {result.step.mean_ms:.2f} ms; target >= "
        f"{COMM_SHARE_TARGET:.0%}: {_met(share >= COMM_SHARE_TARGET)})"
    )


def _reference_step(runs: Path, strategy: str, ranks: int) -> float | None:
    line = _reference_line(runs, f"ref-{strategy}-{ranks}")
    return float(str(line["step_ms"])) if line else None


def _threads(line: dict[str, object] | None) -> str:
    """How a reference job ran: its torch threads and its CPU time per step (older lines: neither)."""
    if line is None or "threads" not in line:
        return ""
    threads, cpu = int(str(line["threads"])), float(str(line["cpu_ms_per_step"]))
    return f" ({threads} thread{'s' if threads != 1 else ''}, CPU {cpu:.1f} ms/step)"


def threads_line(runs: Path) -> str:
    """The one-GPU reference DDP step at OMP_NUM_THREADS=1 (the scaling's baseline) and at torch's default:
    what the thread policy alone changes, with the CPU time each burned per step."""
    one, default = _reference_line(runs, "ref-ddp-1"), _reference_line(runs, "ref-ddp-1-default-threads")
    if one is None or default is None:
        return "reference ddp x1 thread policy: missing"
    one_ms, default_ms = float(str(one["step_ms"])), float(str(default["step_ms"]))
    return (
        f"reference ddp x1 thread policy: OMP_NUM_THREADS=1 {one_ms:.2f} ms{_threads(one)}, torch's default "
        f"{default_ms:.2f} ms{_threads(default)}"
    )


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def scaling_line(strategy: str, ours: TrainResult | None, runs: Path, ranks: int) -> str:
    one, many = reference_tokens_per_s(runs, strategy, 1), reference_tokens_per_s(runs, strategy, ranks)
    theirs = many / (ranks * one) if one and many else None
    mine = ours.scaling.efficiency if ours is not None and ours.scaling else None
    gap = (
        f", {100 * abs(mine - theirs):.1f} points apart ({_met(abs(mine - theirs) <= SCALING_GAP_TARGET)})"
        if mine is not None and theirs is not None
        else ""
    )
    # The steps each efficiency rests on: where the two loops differ, in the one-GPU step or the N-GPU one.
    job_one, job_many = (_reference_line(runs, f"ref-{strategy}-{n}") for n in (1, ranks))
    steps = (
        f" [step ms, 1 GPU / {ranks} GPUs: train-bench {_ms(ours.scaling.baseline.mean_ms)} / "
        f"{ours.step.mean_ms:.2f}, reference {_ms(_reference_step(runs, strategy, 1))}{_threads(job_one)} / "
        f"{_ms(_reference_step(runs, strategy, ranks))}{_threads(job_many)}]"
        if ours is not None and ours.scaling
        else ""
    )
    return (
        f"{strategy} scaling efficiency on {ranks} GPUs: train-bench {_pct(mine)}, reference loop "
        f"(benchmarks/train_reference.py, torchtitan's FSDP2 layout) {_pct(theirs)}{gap}{steps}"
    )


def main(runs: Path) -> int:
    ddp, fsdp, fsdp_sockets, ab = (_train(runs / f"{n}.json") for n in ("ddp", "fsdp", "fsdp-sockets", "ab"))
    lines = []
    for name, document in (("DDP NVLink", ddp), ("FSDP NVLink", fsdp), ("FSDP sockets", fsdp_sockets)):
        lines.append(run_line(name, document) if isinstance(document, TrainResult) else f"{name}: missing")
    if isinstance(ab, TrainAB):
        lines.append(run_line("DDP sockets (--ab off, round 0)", ab.off))
    lines.append(threads_line(runs))
    # The targets last: the default run, --ab, scaling against the reference, predicted vs measured.
    lines.append(default_line(ddp if isinstance(ddp, TrainResult) else None, runs))
    if isinstance(ab, TrainAB):
        interval = (
            f" [95% {ab.speedup_low:.3g}-{ab.speedup_high:.3g}] (met)"
            if ab.speedup_low
            else " (no interval: MISS)"
        )
        busbw = ", ".join(f"{b.kind} {b.size_bytes / 1e6:.1f} MB {b.speedup:.2f}x" for b in ab.busbw[:3])
        lines.append(
            f"--ab DDP: {ab.speedup:.2f}x tokens/s{interval} over {ab.rounds} ABBA rounds; busbw speed-up at "
            f"the step's sizes: {busbw or '-'}"
        )
    else:
        lines.append("--ab: missing (MISS)")
    ranks = ddp.world_size if isinstance(ddp, TrainResult) else 4
    lines.append(scaling_line("ddp", ddp if isinstance(ddp, TrainResult) else None, runs, ranks))
    lines.append(scaling_line("fsdp", fsdp if isinstance(fsdp, TrainResult) else None, runs, ranks))
    predicted = [("DDP NVLink", ddp), ("FSDP NVLink", fsdp), ("FSDP sockets", fsdp_sockets)]
    predicted.append(("DDP sockets", ab.off if isinstance(ab, TrainAB) else None))
    for name, document in predicted:
        if isinstance(document, TrainResult):
            lines.append(target_line(name, document))
        else:
            lines.append(f"predicted vs measured exposed comm, {name}: missing (MISS)")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
