"""Replay the warm-up rule over recorded GPU runs: the "never settled" table note before and after.

Reads each run's result.json (a file, a run directory, or every runs/*/result.json inside a .tgz that
benchmarks/gpu.sh brought back) and, per run, prints the note as recorded (the rule of the day: a
size that disagreed after ``max_unstable_batches`` discards) and as the current rule
(``bench.steady_rule``) decides it. What a result keeps: the kept batches of each size and, in the notes,
which sizes never settled; the discarded batches' values are gone, only their count is known. So:

- a size that settled under the recorded rule settles identically now (the current rule allows at
  least as many discards and agrees on the same pairs), with the same kept batches;
- a size that never settled had its ``max_unstable_batches`` discards spent, and its kept batches are
  the ones that came next: the replay goes on discarding over them with the budget left
  (``allowed_discards``). A size that settles there keeps what follows (the real run would run more
  batches to make up ``batches``); one whose record ends first is counted as unsettled (undecided).

  python benchmarks/settle_replay.py benchmarks/results/2026-11-27-h200x4-s4/timing/timing-runs.tgz ...
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import sys
import tarfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpufabric.bench.batches import BatchLog
from gpufabric.bench.steady_rule import DISTURBED_SHORT_SIZES, SHORT_BATCH_US
from gpufabric.units import human_size

_UNSETTLED = re.compile(
    r"^(?P<collective>[\w?() ]+): batches never agreed within .* discarded: (?P<sizes>.*)$"
)


@dataclass
class Replayed:
    where: str
    recorded_us: list[float]
    outcome: str  # "settled", "gave up", "undecided"
    kept_us: list[float] = field(default_factory=list)

    @property
    def short(self) -> bool:
        return statistics.median(self.recorded_us) < SHORT_BATCH_US


@dataclass
class RunReplay:
    label: str
    placements: int
    before_unsettled: list[str]
    replayed: list[Replayed]

    @property
    def before_note(self) -> bool:
        return bool(self.before_unsettled)

    @property
    def after_unsettled(self) -> list[Replayed]:
        return [r for r in self.replayed if r.outcome != "settled"]

    @property
    def after_note(self) -> bool:
        left = self.after_unsettled
        return any(not r.short for r in left) or sum(r.short for r in left) >= DISTURBED_SHORT_SIZES


def unsettled_names(notes: list[str]) -> set[tuple[str, str]]:
    """(collective, "8 B oop") of every size the recorded notes call unsettled."""
    found = set()
    for note in notes:
        match = _UNSETTLED.match(note)
        if match:
            found.update((match["collective"], name) for name in match["sizes"].split(", "))
    return found


def continue_rule(kept: list[float], settings: dict[str, Any], batches: int) -> tuple[str, list[float]]:
    """The current rule run on from where the recorded one gave up, over the batches it kept."""
    log = BatchLog(float(settings["stable_tol"]), int(settings["max_unstable_batches"]))
    # The recorded rule spent its discards; their values were not kept, only their count.
    log.discarded_us.extend([math.nan] * log.max_unstable)
    for value in kept:
        log.add(value)
        if log.settled:
            break
    consumed = len(log.discarded_us) - log.max_unstable + len(log.samples_us)
    log.samples_us.extend(kept[consumed:])
    if not log.settled:
        return "undecided", []
    return ("settled" if log.stable else "gave up"), log.samples_us[-batches:]


def replay(label: str, document: dict[str, Any]) -> RunReplay:
    settings = document["metadata"]["settings"]
    unsettled = unsettled_names(document["metadata"]["notes"])
    placements, replayed = 0, []
    for series in document["series"]:
        for row in series["rows"]:
            for key, suffix in (("out_of_place", " oop"), ("in_place", "")):
                kept = [float(v) for v in ((row.get(key) or {}).get("samples_us") or [])]
                if not kept:
                    continue
                placements += 1
                where = f"{human_size(int(row['size_bytes']))}{suffix}"
                if (series["collective"], where) in unsettled:
                    outcome, after = continue_rule(kept, settings, int(settings["batches"]))
                    replayed.append(Replayed(f"{series['collective']} {where}", kept, outcome, after))
    before = sorted(f"{c} {w}" for c, w in unsettled)
    return RunReplay(label, placements, before, replayed)


def documents(path: Path) -> list[tuple[str, dict[str, Any]]]:
    if path.is_dir():
        path = path / "result.json"
    if path.suffix != ".tgz":
        return [(str(path.parent.name), json.loads(path.read_text(encoding="utf-8")))]
    # The dated results folder names the session: 2026-11-27-h200x4-s4/startup-runs.tgz:gf-0.
    where = f"{path.parent.parent.name}/{path.name}" if path.parent.parent.name else path.name
    found = []
    with tarfile.open(path) as archive:
        for member in sorted(archive.getmembers(), key=lambda m: m.name):
            if member.name.endswith("/result.json"):
                handle = archive.extractfile(member)
                if handle is not None:
                    found.append((f"{where}:{Path(member.name).parent.name}", json.load(handle)))
    return found


def isolate_rounds(folder: Path, loaded_rank: int) -> None:
    """Each group's one-iteration batches of ``gpufabric isolate`` rounds (round.json) through the current
    rule: whether groups with the loaded GPU's rank settle, and at what level against the others."""
    for run in sorted(p for p in folder.iterdir() if p.is_dir()):
        by_load: dict[bool, list[tuple[bool, int, float]]] = {True: [], False: []}
        for path in sorted(run.glob("round*/round.json")):
            for group in json.loads(path.read_text(encoding="utf-8"))["groups"]:
                log = BatchLog(0.02, 3)
                for value in group["samples_us"]:
                    log.add(float(value))
                    if log.settled:
                        break
                level = statistics.median(group["samples_us"])
                by_load[loaded_rank in group["ranks"]].append((log.stable, len(log.discarded_us), level))
        for loaded, groups in by_load.items():
            if groups:
                which = f"{'with' if loaded else 'without'} rank {loaded_rank}"
                print(
                    f"{run.name:8} {which:14}: groups {len(groups):2}, settled "
                    f"{sum(g[0] for g in groups):2}, discards max {max(g[1] for g in groups)}, median "
                    f"{min(g[2] for g in groups):.1f}-{max(g[2] for g in groups):.1f} us"
                )


def _fmt(values: list[float]) -> str:
    return "[" + ", ".join(f"{v:.1f}" for v in values) + "]"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", type=Path, help="result.json, run directories or runs .tgz")
    parser.add_argument(
        "--isolate-load", type=Path, help="a folder of isolate runs (round*/round.json) to replay as well"
    )
    parser.add_argument("--loaded-rank", type=int, default=3, help="the rank whose GPU ran the load")
    args = parser.parse_args(argv)
    if args.isolate_load:
        isolate_rounds(args.isolate_load, args.loaded_rank)
    runs = [replay(label, doc) for path in args.paths for label, doc in documents(path)]
    print(f"{'run':58} {'placements':>10}  note before  after  (unsettled sizes before -> after)")
    for run in runs:
        left = run.after_unsettled
        print(
            f"{run.label:58} {run.placements:>10}  {'yes' if run.before_note else 'no':>11}  "
            f"{'yes' if run.after_note else 'no':>5}  ({len(run.before_unsettled)} -> {len(left)})"
        )
        for r in run.replayed:
            medians = f"median {statistics.median(r.recorded_us):.2f}"
            if r.kept_us:
                medians += f" -> {statistics.median(r.kept_us):.2f} us ({len(r.kept_us)} kept in the record)"
            kind = "short" if r.short else "long"
            print(f"    {r.where:28} {kind:5} {_fmt(r.recorded_us):44} {r.outcome:9} {medians}")
    before = sum(r.before_note for r in runs)
    after = sum(r.after_note for r in runs)
    print(f"runs: {len(runs)}; with the note: {before} before, {after} after")
    return 0


if __name__ == "__main__":
    sys.exit(main())
