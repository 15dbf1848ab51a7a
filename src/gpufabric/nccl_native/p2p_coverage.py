"""Which GPU pairs NCCL's P2P check covered, from NCCL's own INFO lines beside its ``NCCL DIAG`` summary.

The summary (``p2p: all 10 directed GPU P2P edges verified``) counts only the pairs NCCL would connect by
P2P ("topology-eligible directed GPU P2P pairs", ncclDiagP2pReportSummary in src/diagnostics/p2p.cc, tag
v2.31.2-1), and prints nothing at all when no pair is eligible (``NCCL_P2P_DISABLE=1``). So "all verified"
can hide a pair without P2P. With ``NCCL_DEBUG=INFO`` (subsystem INIT) NCCL names every edge it checks
(``Diagnostics P2P write srcRank=0 ... dstRank=1 ...``, ncclDiagP2pLogEdge), which ranks share a node
(``comm 0x... rank 0 nRanks 4 nNodes 1 localRanks 4 localRank 0``, src/init.cc) and the settings that
decided it (``NCCL_P2P_LEVEL set by environment to NVL``, src/misc/param.cc): enough to name the pair.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, Field

from gpufabric.nccl_logs.patterns import (
    CHANNEL_LINK,
    COMM_INIT,
    COMM_NODES,
    ENV_SET,
    MARKER,
    split_header,
)

# NCCL's per-edge line (ncclDiagP2pLogEdge); the rest (comm, Init, Channel, env lines) are read with the
# NCCL log reader's own patterns (``nccl_logs.patterns``) on the message after ``NCCL INFO``.
_EDGE = re.compile(
    r"^Diagnostics P2P \w+ srcRank=(?P<src>\d+) srcCudaDev=-?\d+ srcNvmlDev=(?P<src_dev>-?\d+) "
    r"dstRank=(?P<dst>\d+) dstCudaDev=-?\d+ dstNvmlDev=(?P<dst_dev>-?\d+) "
)
# The settings that decide whether NCCL connects a GPU pair by P2P (src/transport/p2p.cc, src/graph/paths.cc).
P2P_SETTINGS = ("NCCL_P2P_DISABLE", "NCCL_P2P_LEVEL", "NCCL_P2P_DIRECT_DISABLE", "NCCL_TOPO_FILE")
_KEYS = ("Diagnostics P2P ", " localRanks ", "Init COMPLETE", " via ", " set by environment to ")


class P2pCoverage(BaseModel):
    """What NCCL's INFO lines say about the P2P check's pairs (empty when the log has no INFO lines)."""

    model_config = ConfigDict(extra="forbid")

    ranks_by_host: dict[str, list[int]] = Field(default_factory=dict, description="from the comm lines")
    device_of: dict[int, int] = Field(default_factory=dict, description="rank -> NVML device index")
    checked: list[tuple[int, int]] = Field(default_factory=list, description="directed edges NCCL named")
    channels: dict[str, list[str]] = Field(default_factory=dict, description="'0->1' -> transports used")
    settings: dict[str, str] = Field(default_factory=dict, description="P2P settings set by environment")
    evidence: list[str] = Field(default_factory=list, description="the setting lines, verbatim")

    def node_edges(self) -> int | None:
        """Directed GPU pairs within nodes: what the check covers when every pair is eligible."""
        return sum(len(r) * (len(r) - 1) for r in self.ranks_by_host.values()) if self.ranks_by_host else None

    def unchecked_pairs(self) -> list[tuple[int, int]]:
        """GPU pairs on one node that NCCL named no checked edge for, in either direction (low rank first)."""
        if not self.checked:
            return []  # NCCL named no edge: the log cannot tell which pairs were left out
        done = set(self.checked)
        return [
            (a, b)
            for ranks in self.ranks_by_host.values()
            for i, a in enumerate(sorted(ranks))
            for b in sorted(ranks)[i + 1 :]
            if (a, b) not in done and (b, a) not in done
        ]

    def gpu(self, rank: int) -> str:
        return str(self.device_of.get(rank, f"of rank {rank}"))


def read_p2p_coverage(lines: Iterable[str]) -> P2pCoverage:
    """The coverage facts among ``lines`` (any prefix before ``host:pid:tid`` is ignored)."""
    coverage = P2pCoverage()
    checked: set[tuple[int, int]] = set()
    members: set[tuple[int, str, int]] = set()  # (nRanks, host, rank) of every communicator's ranks
    for line in lines:
        marker = MARKER.search(line)
        if marker is None or marker["level"] != "INFO" or not any(key in line for key in _KEYS):
            continue
        msg = line[marker.end() :].rstrip("\n")
        if m := _EDGE.match(msg):
            src, dst = int(m["src"]), int(m["dst"])
            checked.add((src, dst))
            coverage.device_of.setdefault(src, int(m["src_dev"]))
            coverage.device_of.setdefault(dst, int(m["dst_dev"]))
        elif (m := COMM_NODES.search(msg)) and (header := split_header(line[: marker.start()])):
            members.add((int(m["nranks"]), header[0], int(m["rank"])))
        elif (m := COMM_INIT.search(msg)) and m["nvml"] is not None:
            coverage.device_of.setdefault(int(m["rank"]), int(m["nvml"]))
        elif m := CHANNEL_LINK.match(msg):
            via = coverage.channels.setdefault(f"{m['rank']}->{m['peer']}", [])
            if m["transport"] not in via:
                via.append(m["transport"])
        elif (m := ENV_SET.match(msg)) and m["name"] in P2P_SETTINGS and m["name"] not in coverage.settings:
            coverage.settings[m["name"]] = m["value"].rstrip().removesuffix(".")
            coverage.evidence.append(line.rstrip("\n"))
    coverage.checked = sorted(checked)
    # The job's own communicator is the largest; a job's smaller ones (sub-groups) number ranks their own way.
    largest = max((n for n, _, _ in members), default=0)
    for _, host, rank in sorted(m for m in members if m[0] == largest):
        coverage.ranks_by_host.setdefault(host, []).append(rank)
    return coverage
