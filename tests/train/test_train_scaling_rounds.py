"""benchmarks/train_scaling_rounds.py on three real rounds of FSDP against the reference loop, 4x H200,
2026-11-28 (benchmarks/results/2026-11-28-h200x4-s9: the ``train`` call of 01:17 and the two
``train:scaling`` rounds of 01:24 and 01:25). Each round's efficiencies are in its own summary.txt; the
test checks the paired gaps and the rule on their mean: +6.5 points, inside the 10-point band, however
wide the rounds' interval (as one run's prediction in its band is met, ``train.resolution``); then every
FSDP round of three machines (sessions 9, 11 and 12) pooled."""

from __future__ import annotations

import io
import subprocess
import sys
import tarfile
from pathlib import Path

from train_archives import archived_member

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results" / "2026-11-28-h200x4-s9"
ROUNDS = {
    "call5": RESULTS / "call5-train" / "train" / "train-runs.tgz",
    "s1": RESULTS / "call6-scaling-predict" / "s1" / "train-runs.tgz",
    "s2": RESULTS / "call6-scaling-predict" / "s2" / "train-runs.tgz",
}
WANTED = ("runs/fsdp.json", "runs/ref-fsdp-1.json", "runs/ref-fsdp-4.json", "runs/ddp.json",
          "runs/ref-ddp-1.json", "runs/ref-ddp-4.json")  # fmt: skip


def _rounds(tmp_path: Path) -> list[Path]:
    folders = []
    for name, archive_path in ROUNDS.items():
        with tarfile.open(archive_path) as archive:
            members = [m for m in archive.getmembers() if m.name in WANTED]
            archive.extractall(tmp_path / name, members=members, filter="data")
        folders.append(tmp_path / name / "runs")
    return folders


def _run(strategy: str, folders: list[Path]) -> list[str]:
    script = ROOT / "benchmarks" / "train_scaling_rounds.py"
    proc = subprocess.run(
        [sys.executable, str(script), strategy, *map(str, folders)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


def test_three_rounds_are_judged_by_their_mean_gap_and_its_interval_is_printed(tmp_path: Path) -> None:
    lines = _run("fsdp", _rounds(tmp_path))
    # The rounds' own summaries: 89.3 / 60.3 (29.0 apart), 67.3 / 86.9 (19.6), 81.8 / 71.6 (10.3).
    gaps = [line.rsplit("gap ", 1)[1] for line in lines[:3]]
    assert gaps == ["+29.0 points", "-19.6 points", "+10.3 points"]
    assert lines[0] == "fsdp round call5: train-bench 89.3%, reference 60.3%, gap +29.0 points"
    verdict = lines[-1].removeprefix("fsdp scaling efficiency against the reference loop: ")
    assert verdict.startswith("mean gap +6.5 points (95% ")
    assert verdict.endswith("over 3 rounds: met")
    low, high = (float(x) for x in verdict.split("(95% ")[1].split(")")[0].split(".."))
    assert low < -10 and high > 10  # the rounds disagree: a single one of them could have read either way


def test_a_round_without_its_documents_is_left_out_and_one_round_is_judged_alone(tmp_path: Path) -> None:
    lines = _run("ddp", _rounds(tmp_path))  # only the train call's round ran DDP against the reference
    assert lines[0] == "ddp round call5: train-bench 91.7%, reference 91.0%, gap +0.7 points"
    assert lines[1:3] == [f"ddp round {name}: a document is missing, left out" for name in ("s1", "s2")]
    verdict = lines[-1].removeprefix("ddp scaling efficiency against the reference loop: ")
    assert verdict == "gap +0.7 points, one round: met (no interval)"


# Every FSDP scaling round on 4x H200 with its reference jobs (three machines, sessions 9, 11 and 12): the
# archive, the archives inside it down to the one holding runs/, and the folder of the round under it.
ALL_FSDP_ROUNDS: list[tuple[tuple[str, ...], str]] = [
    *[((f"2026-11-28-h200x4-s9/{path}/train-runs.tgz",), "runs") for path in (
        "call5-train/train", "call6-scaling-predict/s1", "call6-scaling-predict/s2")],
    *[(("2026-11-28-h200x4-s9/call7-scaling-rounds/train-runs.tgz",), f"runs/round-{k}") for k in (1, 2, 3)],
    (("2026-11-28-h200x4-s11/call2/all.tgz", "./train.tgz", "train/train-runs.tgz"), "runs"),
    (("2026-11-28-h200x4-s12/call2/train.tgz", "./train-runs.tgz"), "runs"),
    *[(("2026-11-28-h200x4-s12/call3/scaling.tgz", "./train-runs.tgz"), f"runs/round-{k}")
      for k in (1, 2, 3)],
]  # fmt: skip


def _round_folder(chain: tuple[str, ...], folder: str, into: Path) -> Path:
    """The round's three documents from the innermost archive of ``chain`` (each member an archive inside
    the one before), written under ``into``."""
    data = archived_member(chain)
    wanted = {f"{folder}/{name}" for name in ("fsdp.json", "ref-fsdp-1.json", "ref-fsdp-4.json")}
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        members = [m for m in archive.getmembers() if m.name in wanted]
        assert len(members) == 3, (chain, folder)
        archive.extractall(into, members=members, filter="data")
    return into / folder


def test_eleven_fsdp_rounds_on_three_machines(tmp_path: Path) -> None:
    # One round's gap swings by 30 points either way (the one-GPU FSDP step itself moves by a third between
    # jobs minutes apart, docs/train-bench.md finding 41); the eleven rounds' mean lies inside the band.
    folders = [
        _round_folder(chain, folder, tmp_path / str(i)) for i, (chain, folder) in enumerate(ALL_FSDP_ROUNDS)
    ]
    lines = _run("fsdp", folders)
    gaps = [line.rsplit("gap ", 1)[1].removesuffix(" points") for line in lines[:-1]]
    assert gaps == [
        "+29.0",
        "-19.6",
        "+10.3",
        "+31.5",
        "-0.2",
        "-2.3",
        "-12.6",
        "+18.7",
        "+17.7",
        "-5.8",
        "+19.7",
    ]
    assert lines[-1].endswith("mean gap +7.9 points (95% -3.6..+19.3) over 11 rounds: met"), lines[-1]
    # This session's four alone (one machine) cannot judge it.
    own = _run("fsdp", folders[7:])
    assert own[-1].endswith("mean gap +12.6 points (95% -7.0..+32.1) over 4 rounds: unresolved"), own[-1]
