"""RAS's text report (``STATUS`` / ``VERBOSE STATUS``, NCCL 2.24 and newer) as a ``RasStatus``.

Every pattern below is a ``rasOutAppend`` format of NCCL's ``src/ras/client_support.cc`` (line numbers at
tag v2.28.9-1): the version lines (542-544), the job summary (599-725, outlier nodes 747), the
communicator table (1174, row format 1213), the Errors section (INCOMPLETE 1229, processes 1280, DEAD 1295,
a communicator's INCOMPLETE 1336 and its ranks 1348, ERROR 1365-1382, 1669-1682) and the Warnings section
(TIMEOUT 1400, MISMATCH 1413, status groups 1423-1495, operation counts 1549-1617). NCCL 2.24's older
"The missing rank(s): 21" (line 1173 at v2.24.3-1) is read too. The guide warns that the format "varies
from release to release": a line no pattern knows is skipped, and the raw report stays in ``raw``.
"""

from __future__ import annotations

import re

from gpufabric.nccl_native.ras_model import (
    CommGroup,
    Mismatch,
    MissingRank,
    OutlierGroup,
    RasCommunicator,
    RasProcess,
    RasRank,
    RasStatus,
)
from gpufabric.results.nccl_version import nccl_version

_CUDA = re.compile(r"^CUDA runtime version (-?\d+), driver version (-?\d+)")
_NUMBERS = re.compile(r"^\s*\d+(\s+\d+)*\s*$")
_OUTLIER_NODE = re.compile(r"^  Node (\S+) running process")
_COMMS = re.compile(r"^Communicators\.\.\.\s*\((\d+(?:\.\d+)?)s\)")
_GROUP_ROW = re.compile(
    r"^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+(?:-\d+)?)\s+(\d+)\s+(\d+)\s+([A-Z]+)\s+([A-Z,]+)\s*$"
)
_COMM = re.compile(r"^#(\d+)-(\d+) \(([0-9a-f]+)\) (INCOMPLETE|ERROR|MISMATCH)\s*$")
_PROCESS = re.compile(r"^  Process (\d+) on node (\S+) managing GPUs? (.+)$")
_GPU = r"GPU (\d+)(?: \(NVML (\d+)\))? managed by process (\d+) on node (\S+)"
_RANK = re.compile(r"^  Rank (\d+) -- (?:" + _GPU + r"|\[process information not found\])\s*$")
_RANK_WITH_VALUE = re.compile(
    r"^  Rank (\d+) (?:has status (\S+)|has launched up to operation (\d+)|has not launched any operations)"
    r" -- (?:" + _GPU + r"|\[process information not found\])\s*$"
)
_OLD_MISSING = re.compile(r"^  The missing ranks?: (.+)$")
_GROUP_STATUS = re.compile(r"^  (\d+) ranks have status (\S+)")
_GROUP_OPS = re.compile(r"^  (\d+) ranks have (?:launched up to operation (\d+)|not launched any operations)")
_DIFFERENT = re.compile(r"^  Communicator ranks have different (.+?)\s*$")
_TIMEOUTS = re.compile(r"^  Encountered (\d+) communication timeouts?")
_MISSING_PROCESSES = re.compile(r"^  Missing communicator data from (\d+) job process")
_DEAD_PROCESSES = re.compile(r"^  (\d+) job process(?:es are| is) considered dead")


def _gpu_rank(rank: str, match: re.Match[str], first: int) -> dict[str, object]:
    """The rank fields of a ``Rank R -- GPU ...`` line; ``first`` is the group index of the GPU's number."""
    cuda, nvml, pid, host = (match.group(first + i) for i in range(4))
    return {
        "rank": int(rank),
        "cuda_dev": int(cuda) if cuda else None,
        "nvml_dev": int(nvml) if nvml else (int(cuda) if cuda else None),
        "pid": int(pid) if pid else None,
        "host": host,
    }


class _Reader:
    """One pass over the report's lines, section by section."""

    def __init__(self, address: str, raw: str) -> None:
        self.status = RasStatus(address=address, format="text", raw=raw)
        self.section = "header"
        self.block: str | None = None  # INCOMPLETE, DEAD, TIMEOUT, or a communicator's kind
        self.comm: RasCommunicator | None = None
        self.mismatch: Mismatch | None = None
        self.after_total = False

    def _communicator(self, label: str, hash_: str) -> RasCommunicator:
        for comm in self.status.communicators:
            if comm.label == label:
                return comm
        comm = RasCommunicator(hash=hash_, label=label)
        self.status.communicators.append(comm)
        return comm

    def line(self, line: str) -> None:
        stripped = line.strip()
        if stripped in ("Job summary", "Errors", "Warnings"):
            self.section, self.block, self.comm = stripped, None, None
            return
        if m := _COMMS.match(stripped):
            self.section, self.status.collection_seconds = "Communicators", float(m[1])
            return
        if self.section == "header":
            if line.startswith("NCCL version ") and (version := nccl_version(line)):
                self.status.nccl_version = version
            elif m := _CUDA.match(line):
                self.status.cuda_runtime, self.status.cuda_driver = int(m[1]), int(m[2])
            return
        handler = {
            "Job summary": self._summary, "Communicators": self._table, "Errors": self._errors,
            "Warnings": self._warnings,
        }.get(self.section)  # fmt: skip
        if handler is not None:
            handler(line, stripped)

    def _summary(self, line: str, stripped: str) -> None:
        if stripped.startswith("(total)"):
            self.after_total = True
        elif self.after_total and _NUMBERS.match(line):
            numbers = [int(n) for n in line.split()]
            if len(numbers) == 5:  # nodes, processes/node, GPUs/process, processes, GPUs
                numbers = [numbers[0], numbers[3], numbers[4]]
            if len(numbers) == 3:
                self.status.nodes, self.status.processes, self.status.gpus = numbers
            self.after_total = False
        elif _OUTLIER_NODE.match(line):
            self.status.outlier_nodes.append(stripped)

    def _table(self, line: str, stripped: str) -> None:
        if m := _GROUP_ROW.match(line):
            values = m.groups()
            group = CommGroup(
                group=int(values[0]), comms=int(values[1]), nodes_per_comm=int(values[2]),
                ranks_per_node=values[3], ranks_per_comm=int(values[4]), ranks_in_group=int(values[5]),
                status=values[6], errors=values[7],
            )  # fmt: skip
            self.status.groups.append(group)

    def _comm_header(self, line: str) -> bool:
        m = _COMM.match(line)
        if m is None:
            return False
        self.comm = self._communicator(f"#{m[1]}-{m[2]}", m[3])
        if m[4] not in self.comm.errors:
            self.comm.errors.append(m[4])
        self.block, self.mismatch = m[4], None
        return True

    def _errors(self, line: str, stripped: str) -> None:
        if stripped in ("INCOMPLETE", "DEAD"):
            self.block, self.comm = stripped, None
            return
        if self._comm_header(line):
            return
        if self.comm is None:
            if m := _MISSING_PROCESSES.match(line):
                self.status.missing_process_count = int(m[1])
            elif m := _DEAD_PROCESSES.match(line):
                self.status.dead_process_count = int(m[1])
            elif m := _PROCESS.match(line):
                process = RasProcess(pid=int(m[1]), host=m[2], gpus=m[3].strip())
                dead = self.block == "DEAD"
                (self.status.dead_processes if dead else self.status.incomplete_processes).append(process)
            return
        if self.block == "INCOMPLETE":
            if m := _RANK.match(line):
                self.comm.missing.append(MissingRank(**_gpu_rank(m[1], m, 2)))
            elif m := _OLD_MISSING.match(line):
                ranks = [int(r) for r in re.findall(r"\d+", m[1])]
                self.comm.missing.extend(MissingRank(rank=r) for r in ranks)
        elif self.block == "ERROR" and stripped:
            self.comm.rank_errors.append(stripped)

    def _warnings(self, line: str, stripped: str) -> None:
        if stripped == "TIMEOUT":
            self.block, self.comm = "TIMEOUT", None
            return
        if m := _TIMEOUTS.match(line):
            self.status.timeouts = int(m[1])
            return
        if self._comm_header(line) or self.comm is None:
            return
        if m := _DIFFERENT.match(line):
            what = m[1]
            self.mismatch = Mismatch(what=what)
            self.comm.mismatches.append(self.mismatch)
        elif self.mismatch is None:
            return
        elif m := _GROUP_STATUS.match(line):
            self.mismatch.groups.append(OutlierGroup(count=int(m[1]), value=m[2]))
        elif m := _GROUP_OPS.match(line):
            self.mismatch.groups.append(OutlierGroup(count=int(m[1]), value=m[2] or "0"))
        elif m := _RANK_WITH_VALUE.match(line):
            value = m[2] or m[3] or "0"
            rank = RasRank(**_gpu_rank(m[1], m, 4))
            self.mismatch.groups.append(OutlierGroup(count=1, value=value, ranks=[rank]))
        elif (m := _RANK.match(line)) and self.mismatch.groups:
            self.mismatch.groups[-1].ranks.append(RasRank(**_gpu_rank(m[1], m, 2)))


def parse_ras_text(text: str, *, address: str) -> RasStatus:
    """The RAS text report ``text`` (queried at ``address``) as a ``RasStatus``."""
    reader = _Reader(address, text)
    for line in text.splitlines():
        reader.line(line)
    status = reader.status
    for comm in status.communicators:
        comm.missing = _with_state(comm.missing, status)
    return status


def _with_state(missing: list[MissingRank], status: RasStatus) -> list[MissingRank]:
    """A missing rank's process listed under DEAD is dead; under INCOMPLETE it did not answer."""
    dead: set[tuple[str | None, int | None]] = {(p.host, p.pid) for p in status.dead_processes}
    silent: set[tuple[str | None, int | None]] = {(p.host, p.pid) for p in status.incomplete_processes}
    states = {key: "dead" for key in dead} | {key: "unresponsive" for key in silent - dead}
    return [
        rank.model_copy(update={"state": states.get((rank.host, rank.pid), rank.state)}) for rank in missing
    ]
