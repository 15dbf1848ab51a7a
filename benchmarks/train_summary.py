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
from gpufabric.train.predict import AGREEMENT_BAND, agreement_verdict


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
        f"({p.agreement_pct:.0f}%, wire {p.wire_ms:.2f} ms{rates}) {_met(within)}: "
        f"{agreement_verdict(p)[:160]}"
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


def scaling_line(strategy: str, ours: TrainResult | None, runs: Path, ranks: int) -> str:
    one, many = _reference(runs, strategy, 1), _reference(runs, strategy, ranks)
    theirs = many / (ranks * one) if one and many else None
    mine = ours.scaling.efficiency if ours is not None and ours.scaling else None
    gap = (
        f", {100 * abs(mine - theirs):.1f} points apart ({_met(abs(mine - theirs) <= SCALING_GAP_TARGET)})"
        if mine is not None and theirs is not None
        else ""
    )
    return (
        f"{strategy} scaling efficiency on {ranks} GPUs: train-bench {_pct(mine)}, reference loop "
        f"(benchmarks/train_reference.py, torchtitan's FSDP2 layout) {_pct(theirs)}{gap}"
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
    lines.append(scaling_line("ddp", ddp if isinstance(ddp, TrainResult) else None, runs, ranks))
    lines.append(scaling_line("fsdp", fsdp if isinstance(fsdp, TrainResult) else None, runs, ranks))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
