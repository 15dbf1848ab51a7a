"""Stage-aware hang handling: ranks report the stage they enter, the parent bounds each stage.

Stages, in order, with their deadline keys::

    launch            spawn -> the rank's first report              (parent side only)
    rendezvous        connect to the TCP store at MASTER_ADDR:PORT
    init              communicator init (init_process_group)
    first collective  the first collective (gathering every rank's facts)
    <coll> <size>     one size of the sweep, e.g. 'all_reduce 1 MB'  (key: size)
    finish            final barrier, result written

A rank announces each stage with one stdout line (``GPUFABRIC_STAGE {json}``), which every launcher
forwards (mpirun, srun, kubectl logs: no shared file system needed), and also replaces
``<run_dir>/stages/rank<N>.json`` atomically, for post-mortems. The parent's ``StageWatchdog`` reads
the lines; a stage expires when the furthest rank entered it longer ago than its deadline. Ranks still
in an earlier stage "did not arrive"; if every rank is in it, they all "did not finish". No torch here.
"""

from __future__ import annotations

import json
import os
import re
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from gpufabric.boundary_names import STAGE_TAG
from gpufabric.errors import UsageError
from gpufabric.outputs import atomic_write_text
from gpufabric.units import human_size

ROUND_TIMEOUT_S = 600.0  # isolate's and certify's rounds: one job each (bench.groups)

STAGES_DIR = "stages"
StageKey = Literal["launch", "rendezvous", "init", "first", "size", "finish"]
STAGE_KEYS: tuple[str, ...] = ("launch", "rendezvous", "init", "first", "size", "finish", "total")


class StageTimeouts(BaseModel):
    """Seconds each stage may last. Defaults suit a 2-node run: slow starts, quick steps."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    launch: float = Field(default=300.0, gt=0, description="spawn to first report (imports, containers)")
    rendezvous: float = Field(default=120.0, gt=0, description="every rank reaches the TCP store")
    init: float = Field(default=180.0, gt=0, description="communicator init")
    first: float = Field(default=120.0, gt=0, description="first collective (connections set up)")
    size: float = Field(default=300.0, gt=0, description="each size of the sweep, both placements")
    finish: float = Field(default=120.0, gt=0, description="final barrier and result")
    total: float | None = Field(default=None, gt=0, description="the whole job; None = sum of stages")

    def of(self, key: str) -> float:
        value = getattr(self, key)
        assert isinstance(value, float)
        return value


def parse_stage_timeouts(
    text: str | None, *, uniform: float | None = None, base: StageTimeouts | None = None
) -> StageTimeouts:
    """``--timeout S`` (every stage S seconds) then ``--timeout-stage init=120,size=60,total=3600``."""
    values: dict[str, float | None] = dict((base or StageTimeouts()).model_dump())
    if uniform is not None:
        for key in STAGE_KEYS[:-1]:
            values[key] = float(uniform)
    for item in (text or "").split(","):
        if not item.strip():
            continue
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep or key not in STAGE_KEYS:
            raise UsageError(
                f"--timeout-stage: {item.strip()!r} is not STAGE=SECONDS with STAGE one of "
                f"{', '.join(STAGE_KEYS)}; write e.g. --timeout-stage init=120,size=60"
            )
        try:
            seconds = float(raw.strip().removesuffix("s"))
        except ValueError:
            seconds = -1.0
        if not 0 < seconds < 1e7:
            raise UsageError(f"--timeout-stage: {key}={raw.strip()!r} must be a positive number of seconds")
        values[key] = seconds
    return StageTimeouts.model_validate(values)


class StageReport(BaseModel):
    """What a rank says when it enters a stage."""

    model_config = ConfigDict(extra="ignore")

    rank: int
    seq: int = Field(ge=0, description="stages entered so far; the parent compares ranks by it")
    key: StageKey
    stage: str = Field(description="human name: 'init', 'all_reduce 1 MB' ...")
    collective: str | None = None
    size: int | None = None
    host: str | None = None
    pid: int | None = None


def stage_name(collective: str, size: int) -> str:
    return f"{collective} {human_size(size)}"


class StageReporter:
    """Rank side: one line on stdout and one atomically replaced file per stage entered."""

    def __init__(self, run_dir: Path, rank: int, emit: Callable[[str], None] | None = None) -> None:
        self.path = Path(run_dir) / STAGES_DIR / f"rank{rank}.json"
        self.rank = rank
        self.seq = 0
        self.host = socket.gethostname()
        self.emit = emit or (lambda line: print(line, flush=True))
        self.entered: dict[str, float] = {}  # each stage key's first entry, seconds since the epoch

    def mark(self, name: str) -> None:
        """Note when this rank reached ``name``, a start-up phase that is no watched stage (rank 0's
        ``results.phases``): no line, no file."""
        self.entered.setdefault(name, time.time())

    def enter(self, key: StageKey, *, collective: str | None = None, size: int | None = None) -> None:
        self.entered.setdefault(key, time.time())  # rank 0's start-up phases (results.phases)
        self.seq += 1
        name = stage_name(collective, size) if collective and size is not None else key
        if key == "first":
            name = "first collective"
        report = StageReport(
            rank=self.rank, seq=self.seq, key=key, stage=name, collective=collective, size=size,
            host=self.host, pid=os.getpid(),
        )  # fmt: skip
        text = report.model_dump_json(exclude_none=True)
        self.emit(STAGE_TAG + text)
        try:  # the file is for post-mortems only: a read-only or full run dir must not fail the run
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # No fsync: the file is read after the process, not after a crash of the machine, and an
            # fsync per stage per rank is disk work between every two sizes. A full disk still leaves no
            # temporary file behind.
            atomic_write_text(self.path, text + "\n", durable=False)
        except OSError:
            pass


class StageExpiry(BaseModel):
    """Why the watchdog stopped the job."""

    stage: str
    key: str
    after_s: float
    missing: list[int]
    waiting: list[int]
    message: str


def _ranks(ranks: list[int]) -> str:
    return f"rank{'s' if len(ranks) > 1 else ''} {','.join(str(r) for r in ranks)}"


class StageWatchdog:
    """Parent side: ``observe`` every output line, ``check`` periodically (``run_commands`` does)."""

    def __init__(
        self, nranks: int, timeouts: StageTimeouts, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.nranks = nranks
        self.timeouts = timeouts
        self.clock = clock
        self.started = clock()
        self.ranks: dict[int, StageReport] = {}
        self.first_seen: dict[int, tuple[float, StageReport]] = {}
        self.expired: StageExpiry | None = None

    def observe(self, line: str) -> bool:
        """True when ``line`` was a stage report (the caller then hides it from the user)."""
        if not line.startswith(STAGE_TAG):
            return False
        try:  # the first JSON object: multiplexed output (mpirun) may glue text after it
            obj, _ = json.JSONDecoder().raw_decode(line, len(STAGE_TAG))
            report = StageReport.model_validate(obj)
        except ValueError:
            return True  # a garbled report (interleaved output) is not worth failing the run over
        if not 0 <= report.rank < self.nranks:
            return True
        previous = self.ranks.get(report.rank)
        if previous is None or report.seq > previous.seq:
            self.ranks[report.rank] = report
            self.first_seen.setdefault(report.seq, (self.clock(), report))
        return True

    def check(self) -> str | None:
        """The one-line reason to stop the job now, or None."""
        if self.expired is not None:
            return self.expired.message
        now = self.clock()
        unstarted = [r for r in range(self.nranks) if r not in self.ranks]
        if unstarted:
            if now - self.started <= self.timeouts.launch:
                return None
            started = sorted(self.ranks)
            where = f" (ranks {','.join(map(str, started))} waiting)" if started else ""
            detail = f"{_ranks(unstarted)} did not start{where}"
            return self._expire("launch", "launch", self.timeouts.launch, unstarted, started, detail)
        lead = max(report.seq for report in self.ranks.values())
        since, report = self.first_seen[lead]
        limit = self.timeouts.of(report.key)
        if now - since <= limit:
            return None
        _, missing, detail = self.diagnose() or ("", [], "")
        waiting = sorted(r for r, rep in self.ranks.items() if rep.seq >= lead)
        return self._expire(report.stage, report.key, limit, missing, waiting, detail)

    def _expire(
        self, stage: str, key: str, after: float, missing: list[int], waiting: list[int], detail: str
    ) -> str:
        message = f"timeout in stage '{stage}' after {after:g} s: {detail}"
        self.expired = StageExpiry(
            stage=stage, key=key, after_s=after, missing=missing, waiting=waiting, message=message
        )
        return message

    def diagnose(self) -> tuple[str, list[int], str] | None:
        """(stage, ranks not there, detail) of the furthest stage reached, for a whole-job timeout."""
        unstarted = [r for r in range(self.nranks) if r not in self.ranks]
        if unstarted or not self.ranks:
            return "launch", unstarted, f"{_ranks(unstarted)} did not start"
        lead = max(report.seq for report in self.ranks.values())
        stage = self.first_seen[lead][1].stage
        behind = sorted(r for r, rep in self.ranks.items() if rep.seq < lead)
        arrived = sorted(r for r, rep in self.ranks.items() if rep.seq >= lead)
        if behind:
            return (
                stage,
                behind,
                f"{_ranks(behind)} did not arrive (ranks {','.join(map(str, arrived))} waiting)",
            )
        return stage, arrived, f"{_ranks(arrived)} did not finish (every rank is in this stage)"

    def where(self) -> dict[int, str]:
        """Each rank's last reported stage (for messages about other failures)."""
        return {rank: report.stage for rank, report in sorted(self.ranks.items())}


def read_stage_files(run_dir: Path) -> dict[int, StageReport]:
    """The last stage every rank wrote to its file (missing or garbled files are skipped)."""
    found: dict[int, StageReport] = {}
    for path in sorted((Path(run_dir) / STAGES_DIR).glob("rank*.json")):
        if not re.fullmatch(r"rank[0-9]+\.json", path.name):
            continue
        try:
            report = StageReport.model_validate_json(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        found[report.rank] = report
    return found
