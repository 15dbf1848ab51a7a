"""The summary lines of benchmarks/gpu.sh train (issue 37), from the documents its steps left in one folder.

    python3 benchmarks/train_summary.py RUNS_DIR

Reads ``ddp.json``, ``fsdp.json``, ``fsdp-sockets.json`` (train-bench ``--out``), ``ab.json`` (the DDP
``--ab`` document: its fabric-off side is DDP on sockets), ``ref-<strategy>-<ranks>.json`` (the last
line of benchmarks/train_reference.py) and ``ddp.wall`` (the default run's wall seconds). Prints one line
per run and per target of the issue, each with the numbers it rests on and ``met`` or ``MISS``; a
document that is missing is said to be missing, nothing is filled in.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from gpufabric.train import TrainAB, TrainResult, read_train_document
from gpufabric.train.verdict import AGREEMENT_BAND, agreement_verdict


def _train(path: Path) -> TrainResult | TrainAB | None:
    return read_train_document(path) if path.is_file() else None


def _reference(runs: Path, strategy: str, ranks: int) -> float | None:
    path = runs / f"ref-{strategy}-{ranks}.json"
    if not path.is_file():
        return None
    lines = [line for line in path.read_text().splitlines() if line.startswith("{")]
    return float(json.loads(lines[-1])["tokens_per_s"]) if lines else None


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
        f", contention {p.contention_ms:.2f} ms: compute {probe.compute_rate:.0%} / collectives "
        f"{probe.comm_rate:.0%} of their speed alone side by side"
        if probe is not None
        else ""
    )
    within = abs(p.agreement_pct / 100 - 1) <= AGREEMENT_BAND
    return (
        f"{head}; exposed measured {p.measured_comm_ms:.2f} ms vs predicted {p.predicted_comm_ms:.2f} ms "
        f"({p.agreement_pct:.0f}%, wire {p.wire_ms:.2f} ms{rates}{_host_path(result)}) {_met(within)}: "
        f"{agreement_verdict(p)}"
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
    """The prediction target alone, for the closing lines: measured vs predicted and the bound that set it."""
    p = result.prediction
    if p is None:
        return f"predicted vs measured exposed comm, {name}: no prediction (MISS)"
    within = abs(p.agreement_pct / 100 - 1) <= AGREEMENT_BAND
    bound = ""
    if p.comm_exposed_ms is not None and p.host_bound_ms is not None:
        which = "host path" if p.host_bound_ms > p.comm_exposed_ms else "communication"
        bound = f", set by {which} (communication {p.comm_exposed_ms:.2f}, host path {p.host_bound_ms:.2f})"
    return (
        f"predicted vs measured exposed comm, {name}: measured {p.measured_comm_ms:.2f} ms, predicted "
        f"{p.predicted_comm_ms:.2f} ms{bound}: {p.agreement_pct:.0f}% (target 85-115%: {_met(within)})"
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
    path = runs / f"ref-{strategy}-{ranks}.json"
    lines = [line for line in path.read_text().splitlines() if line.startswith("{")] if path.is_file() else []
    return float(json.loads(lines[-1])["step_ms"]) if lines else None


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def scaling_line(strategy: str, ours: TrainResult | None, runs: Path, ranks: int) -> str:
    one, many = _reference(runs, strategy, 1), _reference(runs, strategy, ranks)
    theirs = many / (ranks * one) if one and many else None
    mine = ours.scaling.efficiency if ours is not None and ours.scaling else None
    gap = (
        f", {100 * abs(mine - theirs):.1f} points apart ({_met(abs(mine - theirs) <= SCALING_GAP_TARGET)})"
        if mine is not None and theirs is not None
        else ""
    )
    # The steps each efficiency rests on: where the two loops differ, in the one-GPU step or the N-GPU one.
    steps = (
        f" [step ms, 1 GPU / {ranks} GPUs: train-bench {_ms(ours.scaling.baseline.mean_ms)} / "
        f"{ours.step.mean_ms:.2f}, reference {_ms(_reference_step(runs, strategy, 1))} / "
        f"{_ms(_reference_step(runs, strategy, ranks))}]"
        if ours is not None and ours.scaling
        else ""
    )
    return (
        f"{strategy} scaling efficiency on {ranks} GPUs: train-bench {_pct(mine)}, reference loop "
        f"(benchmarks/train_reference.py, torchtitan's FSDP2 layout) {_pct(theirs)}{gap}{steps}"
    )


def main(runs: Path) -> int:
    ddp, fsdp, fsdp_sockets, ab = (_train(runs / f"{n}.json") for n in ("ddp", "fsdp", "fsdp-sockets", "ab"))
    lines = [default_line(ddp if isinstance(ddp, TrainResult) else None, runs)]
    for name, document in (("DDP NVLink", ddp), ("FSDP NVLink", fsdp), ("FSDP sockets", fsdp_sockets)):
        lines.append(run_line(name, document) if isinstance(document, TrainResult) else f"{name}: missing")
    if isinstance(ab, TrainAB):
        lines.append(run_line("DDP sockets (--ab off, round 0)", ab.off))
        interval = (
            f" [95% {ab.speedup_low:.3g}-{ab.speedup_high:.3g}]" if ab.speedup_low else " (no interval: MISS)"
        )
        busbw = ", ".join(f"{b.kind} {b.size_bytes / 1e6:.1f} MB {b.speedup:.2f}x" for b in ab.busbw[:3])
        lines.append(
            f"--ab DDP: {ab.speedup:.2f}x tokens/s{interval} over {ab.rounds} ABBA rounds; busbw speed-up at "
            f"the step's sizes: {busbw or '-'}"
        )
    else:
        lines.append("--ab: missing")
    ranks = ddp.world_size if isinstance(ddp, TrainResult) else 4
    # The targets' figures last: scaling against the reference, then predicted vs measured per fabric.
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
