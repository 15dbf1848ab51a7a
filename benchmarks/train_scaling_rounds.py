"""Scaling efficiency against the reference loop over several rounds, each side by side (issue 37).

    python3 benchmarks/train_scaling_rounds.py STRATEGY ROUND_DIR [ROUND_DIR ...]

Each ROUND_DIR holds one round of ``benchmarks/gpu.sh train:scaling`` (or of ``train``): train-bench's
``<strategy>.json`` (with its one-GPU run) and the reference's ``ref-<strategy>-1.json`` and
``ref-<strategy>-<N>.json``, run one after the other on the same machine. One round's efficiencies rest
on four step times taken at four moments, and FSDP's steps are paced by the host: on 4x H200
(2026-11-28) three rounds put train-bench 29.0 points above the reference, 19.6 below and 10.3 above, so
a single round cannot judge a 10-point target. This prints each round's gap (train-bench minus the
reference, in points), then the rounds' mean gap with its 95% interval (Student's t over rounds: the
rounds are the samples, each a paired comparison) and the verdict of ``gpufabric.train.resolution``'s
rule on the +-10-point band, as for one run's prediction: ``met`` where the mean gap lies in the band,
``MISS`` where its whole interval lies outside, ``unresolved`` where the mean lies outside but its
interval reaches in (one round: its gap alone, as ``train_summary.py`` judges it).
"""

from __future__ import annotations

import sys
from pathlib import Path

from gpufabric.train import TrainResult, read_train_document
from gpufabric.train.resolution import pooled_status

sys.path.insert(0, str(Path(__file__).parent))
from train_summary import SCALING_GAP_TARGET, reference_tokens_per_s  # one target, one reader


def round_gap(folder: Path, strategy: str) -> tuple[float, float, float] | None:
    """(train-bench's efficiency, the reference's, the gap in points) of one round, or None where a document
    of the round is missing or has no one-GPU run."""
    document = (
        read_train_document(folder / f"{strategy}.json") if (folder / f"{strategy}.json").is_file() else None
    )
    if not isinstance(document, TrainResult) or document.scaling is None:
        return None
    ranks = document.world_size
    one, many = reference_tokens_per_s(folder, strategy, 1), reference_tokens_per_s(folder, strategy, ranks)
    if not one or not many:
        return None
    mine, theirs = document.scaling.efficiency, many / (ranks * one)
    return mine, theirs, 100 * (mine - theirs)


def verdict(gaps: list[float]) -> str:
    band = 100 * SCALING_GAP_TARGET
    mean, half, status = pooled_status(gaps, -band, band)
    if half is None:
        return f"gap {mean:+.1f} points, one round: {status} (no interval)"
    interval = f"95% {mean - half:+.1f}..{mean + half:+.1f}"
    return f"mean gap {mean:+.1f} points ({interval}) over {len(gaps)} rounds: {status}"


def main(strategy: str, folders: list[Path]) -> int:
    gaps = []
    for folder in folders:
        name = folder.parent.name if folder.name == "runs" else folder.name  # a round's tarball holds runs/
        found = round_gap(folder, strategy)
        if found is None:
            print(f"{strategy} round {name}: a document is missing, left out")
            continue
        mine, theirs, gap = found
        print(
            f"{strategy} round {name}: train-bench {100 * mine:.1f}%, reference {100 * theirs:.1f}%, "
            f"gap {gap:+.1f} points"
        )
        gaps.append(gap)
    if not gaps:
        print(f"{strategy} scaling over rounds: no round has all its documents")
        return 1
    print(f"{strategy} scaling efficiency against the reference loop: {verdict(gaps)}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 3:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1], [Path(p) for p in sys.argv[2:]]))
