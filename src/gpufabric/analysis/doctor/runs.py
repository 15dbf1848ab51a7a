"""Which NCCL log files are the ranks of one run, so that the doctor never judges two runs as one.

Merging a healthy EFA run's log with another run's socket-fallback log hides the fallback (the links of
the first outvote the second), so files are merged only on proof that they are ranks of one job:

- NCCL logs, for every rank, the communicators it joins: ``comm 0x.. rank R nranks N .. commId 0x..``. A
  communicator is ``(commId, nranks)``; NCCL 2.8-2.12 print no commId, so there it is ``(None, nranks)``,
  and nccl-tests' ``#  Rank R ... Pid`` block (rank 0 prints every rank of the job) is ``(None, 0)``.
- Two files are one run when they share a communicator and log *different* ranks of it. A process writes
  its rank's lines to one place (its NCCL_DEBUG_FILE, or the job's one stdout), so the same rank of the
  same communicator in two files means two runs, even when a reused commId, host or pid says otherwise
  (two runs of one job script on the same nodes, or two whole-run stdout captures).
- A file that names no communicator (NCCL_DEBUG_SUBSYS without INIT, a snippet) proves nothing, so it is
  a run of its own: judged alone, a fallback in it still fails.

Reading a file for this is a byte scan for two literal-prefixed patterns, much cheaper than attesting it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from gpufabric.errors import InputError
from gpufabric.nccl_logs import patterns as pat
from gpufabric.nccl_logs.attest import BLOCK_BYTES
from gpufabric.results.device_line import RANK_BYTES

CommKey = tuple[str | None, int]  # (commId, nranks); nccl-tests' rank block is (None, 0)


@dataclass
class LogRun:
    """Files judged as one run, and the ranks each communicator has in them."""

    files: list[Path]
    members: dict[CommKey, set[int]] = field(default_factory=dict)

    @property
    def identified(self) -> bool:
        return bool(self.members)

    @property
    def comm_ids(self) -> set[CommKey]:
        return {key for key in self.members if key[0] is not None}

    def shares_comm_with(self, other: LogRun) -> bool:
        """A commId in both; without commIds on either side (old NCCL, nccl-tests), the same (None, nranks).
        Lines without a commId (2.13+ still prints none on ``Destroy COMPLETE``) never join runs that
        name different commIds."""
        mine, theirs = self.comm_ids, other.comm_ids
        if mine or theirs:
            return bool(mine & theirs)
        return bool(self.members.keys() & other.members.keys())

    def clashes_with(self, other: LogRun) -> bool:
        """True when a rank of a communicator is in both: two captures of that rank, so two runs."""
        return any(ranks & self.members.get(key, set()) for key, ranks in other.members.items())

    def absorb(self, other: LogRun) -> None:
        self.files.extend(other.files)
        for key, ranks in other.members.items():
            self.members.setdefault(key, set()).update(ranks)


def comm_members(path: Path) -> dict[CommKey, set[int]]:
    """The communicators and ranks one file logs, read block by block (bounded by ranks, not length)."""
    members: dict[CommKey, set[int]] = {}
    rest = b""
    try:
        with path.open("rb") as handle:
            while True:
                chunk = handle.read(BLOCK_BYTES)
                data = rest + chunk
                cut = data.rfind(b"\n") + 1 if chunk else len(data)  # the unfinished line waits
                if cut == 0 and len(data) > BLOCK_BYTES:  # a line longer than a block: bound the memory
                    cut = len(data)
                block, rest = data[:cut], data[cut:]
                for match in pat.COMM_MEMBER.finditer(block):
                    comm_id = match.group("id")
                    key = (comm_id.decode().lower() if comm_id else None, int(match.group("nranks")))
                    members.setdefault(key, set()).add(int(match.group("rank")))
                if b"Rank" in block:
                    for match in RANK_BYTES.finditer(block):
                        members.setdefault((None, 0), set()).add(int(match.group("rank")))
                if not chunk:
                    return members
    except OSError as exc:
        raise InputError(f"{path}: cannot read NCCL log ({exc.strerror or exc}); check the path") from exc


def holds_nccl_lines(path: Path) -> bool:
    """True when the file has a line the attestation counts as NCCL output; stops at the first one."""
    tail = b""
    try:
        with path.open("rb") as handle:
            while chunk := handle.read(BLOCK_BYTES):
                if pat.NCCL_LINE_BYTES.search(tail + chunk):
                    return True
                tail = chunk[-64:]  # a marker cut by the block boundary
    except OSError as exc:
        raise InputError(f"{path}: cannot read NCCL log ({exc.strerror or exc}); check the path") from exc
    return False


def group_runs(paths: Sequence[Path]) -> list[LogRun]:
    """Split log files into runs by the rule in this module's docstring; runs keep the files' order."""
    runs: list[LogRun] = []
    for path in paths:
        candidate = LogRun(files=[path], members=comm_members(path))
        home = next(
            (
                run
                for run in runs
                if candidate.identified
                and run.shares_comm_with(candidate)
                and not run.clashes_with(candidate)
            ),
            None,
        )
        if home is None:
            runs.append(candidate)
        else:
            home.absorb(candidate)
    return runs


def run_label(files: Sequence[Path], taken: set[str]) -> str:
    """A subject name: the file's stem, or the folder of a run's files; made unique among ``taken``."""
    parents = {f.parent for f in files}
    label = files[0].parent.name if len(files) > 1 and len(parents) == 1 else files[0].stem
    if label in taken:
        label = f"{label}/{files[0].stem}" + (f" (+{len(files) - 1} logs)" if len(files) > 1 else "")
    taken.add(label)
    return label
