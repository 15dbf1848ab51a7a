"""The long fuzz run (issue 19: >= 1,000,000 cases) over the generators of ``test_fuzz_readers.py``.

Every target of ``tests/reliability/test_fuzz_readers.py`` is driven with its own generator and its own
property (``rejected_cleanly``: a result, or one ``GpufabricError`` line naming the source), scaled so the
total passes a million cases. Unlike the test, one failing case does not stop the run: each exception is
counted by its cause (exception type and the innermost frame of gpufabric's code that raised it), and the
first few inputs of each cause are kept so they can be replayed and turned into regression fixtures.

Two kinds of targets, as in the test:

- structure-aware (mutated real fixtures): driven by a 64-bit seed drawn from ``random.Random`` seeded with
  ``--seed``, target name and chunk index, so a case replays from its seed alone
  (``mutate_lines(random.Random(seed), ...)`` in the test module);
- raw text and bytes: hypothesis' own strategies, ``derandomize=False`` with a fixed ``@seed`` per chunk.

Cases run in chunks, round-robin over the targets, so a run stopped early still covers all of them; after
each chunk a progress line goes to stderr and the JSON summary (cases and CPU-seconds per target,
exceptions by cause) is rewritten, so ``timeout`` never loses the figures.

    PYTHONPATH=src nice -n 5 timeout 3h python benchmarks/fuzz_long.py --cases 1000000 \\
        --out benchmarks/results/fuzz_long.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "reliability"))
os.environ.setdefault("FUZZ_SCALE", "1.0")

import test_fuzz_readers as suite  # noqa: E402  (the generators and properties under test)

SAMPLES_PER_CAUSE = 5


@dataclass
class Target:
    name: str
    run_case: Callable[[Any], None]
    """Runs one case from its input (a seed, or what the strategy drew); raises what the property raises."""
    strategy: st.SearchStrategy[Any] | None = None
    """None: a structure-aware target driven by seeds; else hypothesis draws the input."""


@dataclass
class Tally:
    cases: int = 0
    cpu_s: float = 0.0
    causes: dict[str, dict[str, Any]] = field(default_factory=dict)


def _cause(exc: BaseException) -> str:
    """Type plus the innermost frame in gpufabric (or the test module) that raised it: one bug, one key."""
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in frames if "/gpufabric/" in f.filename or f.filename.endswith("test_fuzz_readers.py")]
    where = ours[-1] if ours else (frames[-1] if frames else None)
    place = f"{Path(where.filename).name}:{where.lineno} {where.name}" if where else "?"
    return f"{type(exc).__name__} at {place}"


def _targets(scratch: Path) -> list[Target]:
    s = suite
    stream_corpus = s._stream_lines(scratch)

    def text_mutations(seed: int) -> None:
        rnd = random.Random(seed)
        lines = s.mutate_lines(rnd, rnd.choice(s.NCCL_TEXT))
        s.rejected_cleanly(lambda: s._read_text(lines), "fuzz.log")

    def nccl_json(seed: int) -> None:
        rnd = random.Random(seed)
        if rnd.random() < 0.5:
            text = json.dumps(s.mutate_json(rnd, rnd.choice(s.NCCL_JSON_DOCS)))
        else:
            text = "".join(s.mutate_lines(rnd, rnd.choice(s.NCCL_JSON_LINES)))
        s.rejected_cleanly(lambda: s._read_nccl_json(text), "fuzz.json")

    def nccl_log(seed: int) -> None:
        rnd = random.Random(seed)
        if rnd.random() < 0.85:
            lines = s.mutate_lines(rnd, rnd.choice(s.NCCL_LOGS))
        else:
            lines = [s.random_text(rnd, 200) for _ in range(rnd.randint(0, 20))]
        s.rejected_cleanly(lambda: s.attest_lines(lines, source="fuzz-nccl.log"), "fuzz-nccl.log")

    def result_json(seed: int) -> None:
        rnd = random.Random(seed)
        doc = s.mutate_json(rnd, rnd.choice(s.TRIMMED))
        s.rejected_cleanly(lambda: s.result_from_dict(doc, source="fuzz-result.json"), "fuzz-result.json")

    def result_stream(seed: int) -> None:
        s.test_result_stream_mutations.hypothesis.inner_test(  # type: ignore[attr-defined]
            seed=seed, stream_corpus=stream_corpus, scratch=scratch
        )

    def read_run_mutated(seed: int) -> None:
        s.test_read_run_on_mutated_files.hypothesis.inner_test(  # type: ignore[attr-defined]
            seed=seed, scratch=scratch, stream_corpus=stream_corpus
        )

    def ours(seed: int) -> None:
        s.test_our_printed_formats_mutated.hypothesis.inner_test(seed=seed, scratch=scratch)  # type: ignore[attr-defined]

    def byte_damage(seed: int) -> None:
        s.test_every_reader_on_byte_damaged_files.hypothesis.inner_test(seed=seed, scratch=scratch)  # type: ignore[attr-defined]

    def task_yaml(seed: int) -> None:
        rnd = random.Random(seed)
        text = "".join(s.mutate_lines(rnd, rnd.choice(s.TASK_LINES)))
        s.rejected_cleanly(lambda: s.task_from_text(text, source="fuzz-task.yaml"), "fuzz-task.yaml")

    def catalog(seed: int) -> None:
        s.test_catalog_data_mutations.hypothesis.inner_test(seed)  # type: ignore[attr-defined]

    def raw_text(lines: list[str]) -> None:
        s.rejected_cleanly(lambda: s._read_text(lines), "fuzz.log")

    def raw_log(lines: list[str]) -> None:
        s.rejected_cleanly(lambda: s.attest_lines(lines, source="fuzz-nccl.log"), "fuzz-nccl.log")

    def raw_bytes(raw: bytes) -> None:
        s.test_read_run_on_raw_bytes.hypothesis.inner_test(raw=raw, scratch=scratch)  # type: ignore[attr-defined]

    def raw_yaml(text: str) -> None:
        s.rejected_cleanly(lambda: s.task_from_text(text, source="fuzz-task.yaml"), "fuzz-task.yaml")

    raw_any = st.binary(max_size=400) | st.text(max_size=300).map(
        lambda t: t.encode("utf-8", "surrogatepass")
    )
    return [
        Target("nccl_text", text_mutations),
        Target("nccl_text_raw", raw_text, st.lists(st.text(max_size=200), max_size=30)),
        Target("nccl_json", nccl_json),
        Target("nccl_log", nccl_log),
        Target("nccl_log_raw", raw_log, st.lists(st.text(max_size=200), max_size=20)),
        Target("result_json", result_json),
        Target("result_stream", result_stream),
        Target("read_run_raw", raw_bytes, raw_any),
        Target("read_run_mutated", read_run_mutated),
        Target("ours_formats", ours),
        Target("byte_mutation", byte_damage),
        Target("task_yaml", task_yaml),
        Target("task_yaml_raw", raw_yaml, st.text(max_size=200)),
        Target("catalog", catalog),
    ]


def _record(tally: Tally, exc: BaseException, case: Any) -> None:
    key = _cause(exc)
    entry = tally.causes.setdefault(key, {"count": 0, "message": str(exc)[:300], "inputs": []})
    entry["count"] += 1
    if len(entry["inputs"]) < SAMPLES_PER_CAUSE:
        entry["inputs"].append(case if isinstance(case, int) else repr(case)[:2000])


def run_chunk(target: Target, size: int, chunk_seed: int, tally: Tally) -> None:
    def one(case: Any) -> None:
        tally.cases += 1
        try:
            target.run_case(case)
        except Exception as exc:  # every exception is the finding: counted by cause, never raised
            _record(tally, exc, case)

    start = time.process_time()
    if target.strategy is None:
        rnd = random.Random(chunk_seed)
        for _ in range(size):
            one(rnd.getrandbits(64))
    else:
        explore = settings(
            max_examples=size,
            derandomize=False,
            database=None,
            deadline=None,
            suppress_health_check=list(HealthCheck),
        )
        hypothesis_seed(chunk_seed)(explore(given(target.strategy)(one)))()
    tally.cpu_s += time.process_time() - start


def _commit() -> str:
    done = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    dirty = subprocess.run(
        ["git", "-C", str(ROOT), "status", "--porcelain", "src"], capture_output=True, text=True
    )
    return done.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def summary(
    args: argparse.Namespace, tallies: dict[str, Tally], plan: dict[str, int], wall: float
) -> dict[str, Any]:
    causes: dict[str, dict[str, Any]] = {}
    for name, tally in tallies.items():
        for key, entry in tally.causes.items():
            merged = causes.setdefault(
                key, {"count": 0, "targets": {}, "message": entry["message"], "inputs": []}
            )
            merged["count"] += entry["count"]
            merged["targets"][name] = entry["count"]
            merged["inputs"].extend({"target": name, "input": i} for i in entry["inputs"][:2])
    return {
        "command": " ".join(sys.argv),
        "commit": args.commit,
        "seed": args.seed,
        "started": args.started,
        "machine": f"{platform.machine()} {os.cpu_count()} cores, {platform.python_implementation()} "
        f"{platform.python_version()}",
        "load_average_now": os.getloadavg()[0],
        "cases": sum(t.cases for t in tallies.values()),
        "cases_planned": sum(plan.values()),
        "cpu_s": round(sum(t.cpu_s for t in tallies.values()), 1),
        "wall_s": round(wall, 1),
        "exceptions": sum(c["count"] for c in causes.values()),
        "per_target": {
            name: {
                "cases": t.cases,
                "planned": plan[name],
                "cpu_s": round(t.cpu_s, 1),
                "exceptions": sum(c["count"] for c in t.causes.values()),
            }
            for name, t in tallies.items()
        },
        "causes": causes,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--cases", type=int, default=1_000_000, help="total cases, split as the test splits them"
    )
    parser.add_argument("--chunk", type=int, default=2_000, help="cases of one target between progress lines")
    parser.add_argument("--seed", type=int, default=20261125)
    parser.add_argument("--targets", default="", help="comma-separated subset (default: every target)")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "fuzz_long.json")
    args = parser.parse_args()
    args.started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    args.commit = _commit()  # the code this process imported (HEAD may move while it runs)
    with tempfile.TemporaryDirectory(prefix="gpufabric-fuzz-") as tmp:
        targets = _targets(Path(tmp))
        if args.targets:
            wanted = set(args.targets.split(","))
            targets = [t for t in targets if t.name in wanted]
        weight = sum(suite.EXAMPLES[t.name] for t in targets)
        plan = {t.name: -(-args.cases * suite.EXAMPLES[t.name] // weight) for t in targets}
        tallies = {t.name: Tally() for t in targets}
        wall_start = time.perf_counter()
        chunk_index = 0
        while any(tallies[t.name].cases < plan[t.name] for t in targets):
            for target in targets:
                left = plan[target.name] - tallies[target.name].cases
                if left <= 0:
                    continue
                # Chunks are proportional to the target's share, so all targets finish together.
                size = min(left, max(1, args.chunk * plan[target.name] // max(plan.values())))
                chunk_seed = random.Random(f"{args.seed}/{target.name}/{chunk_index}").getrandbits(64)
                run_chunk(target, size, chunk_seed, tallies[target.name])
            chunk_index += 1
            report = summary(args, tallies, plan, time.perf_counter() - wall_start)
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(json.dumps(report, indent=1, default=str) + "\n", encoding="utf-8")
            print(
                f"[{time.strftime('%H:%M:%S')}] round {chunk_index}: "
                f"{report['cases']:,}/{report['cases_planned']:,} cases, {report['cpu_s']:.0f} CPU-s, "
                f"{report['exceptions']} exception(s) from {len(report['causes'])} cause(s)",
                file=sys.stderr,
                flush=True,
            )
    print(json.dumps({k: report[k] for k in ("cases", "cpu_s", "wall_s", "exceptions")}))


if __name__ == "__main__":
    main()
