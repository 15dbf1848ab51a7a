"""Predicted against measured exposed communication over several runs of one configuration (issue 37).

    python3 benchmarks/train_prediction_rounds.py RESULT.json [RESULT.json ...]

Each RESULT.json is one train-bench document (``--out``) of the same model, strategy and world size,
re-predicted with today's model (``gpufabric.train.predict``, as ``train_replay.py`` does). One run's
measured exposed time carries its steps' noise (its 95% interval) and the run-to-run drift of a lent
machine on top: on 4x H200 (2026-11-28) eight DDP runs of 96 steps measured 2.07-4.14 ms on the split
where each run's own interval was +-0.3-1.1 ms, and FSDP's 20-step runs 15.2-39.1 ms. This prints each run's
measured / predicted, then their mean with its 95% interval (Student's t over the runs, each run one
sample) and the rule of ``gpufabric.train.resolution`` on the +-15% band, as for one run: ``met`` where
the mean lies in 85-115%, ``MISS`` where its whole interval lies outside, ``unresolved`` where the mean
lies outside but its interval reaches in.
Documents of another configuration than the first are left out and said so.
"""

from __future__ import annotations

import sys
from pathlib import Path

from gpufabric.train import TrainResult, read_train_document
from gpufabric.train.predict import predict
from gpufabric.train.resolution import pooled_status

BAND = (85.0, 115.0)  # the target: predicted within +-15% of measured, as measured / predicted in percent


def verdict(ratios: list[float]) -> str:
    mean, half, status = pooled_status(ratios, *BAND)
    if half is None:
        return f"{mean:.0f}% from one run (no interval): {status}"
    return f"mean {mean:.0f}% (95% {mean - half:.0f}..{mean + half:.0f}%) over {len(ratios)} runs: {status}"


def main(paths: list[Path]) -> int:
    ratios: list[float] = []
    first: tuple[str, str, int] | None = None
    for path in paths:
        document = read_train_document(path)
        if not isinstance(document, TrainResult):
            print(f"{path}: not a train-bench run, left out")
            continue
        kind = (document.model_name, document.strategy, document.world_size)
        first = first or kind
        if kind != first:
            print(f"{path}: {' '.join(map(str, kind))} is not the first run's configuration, left out")
            continue
        p = predict(document)
        if p is None:
            print(f"{path}: nothing to predict (one rank or no calls), left out")
            continue
        ratios.append(p.agreement_pct)
        measured, predicted = p.measured_comm_ms, p.predicted_comm_ms
        print(f"{path}: measured {measured:.2f} ms, predicted {predicted:.2f}: {p.agreement_pct:.0f}%")
    if first is None or not ratios:
        print("no run to judge")
        return 1
    model, strategy, world = first
    print(f"{model} {strategy} x{world}, measured / predicted exposed communication: {verdict(ratios)}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        sys.exit(2)
    sys.exit(main([Path(p) for p in sys.argv[1:]]))
