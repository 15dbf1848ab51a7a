"""Each host's node snapshot, read once at the start of a run by the lowest rank on it (``bench.hosts``) and
gathered to rank 0, which keeps the snapshots in the run directory (``results.io.NODES_DIR``) and each
host's ``NodeShape`` in the result's metadata (``RunMetadata.node_shapes``), so a result file alone says
what hardware it was measured on.

Cheap and never fatal: NVML, ``nvidia-smi topo -m`` and a few sysfs files (``hardware.detect_node``), read
on a daemon thread while the ranks gather their other facts. A reading that fails, or is still running
after ``DETECT_WAIT_S``, becomes a note and the run goes on without that host's snapshot. The ranks ask no
cloud metadata service (169.254.169.254 answers slowly or not at all off a cloud, and a job of many hosts
would ask it many times) unless the user exported ``GPUFABRIC_CLOUD_METADATA=1`` to them
(``boundary_names.CLOUD_METADATA_ENV``; ``bench --env GPUFABRIC_CLOUD_METADATA=1``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from gpufabric.bench.hosts import Exchange, RankHosts
from gpufabric.boundary_names import CLOUD_METADATA_ENV
from gpufabric.hardware.detect import detect_node
from gpufabric.hardware.snapshot import NodeSnapshot

DETECT_WAIT_S = 15.0
"""How long rank 0's gather waits for a host's reading (nvidia-smi topo -m takes about a second)."""

Detect = Callable[..., NodeSnapshot]
SNAPSHOT_WORK = "node snapshot (NVML, nvidia-smi topo -m, sysfs)"
"""How ``RunPhases.background_s`` names a host's reading."""


@dataclass
class NodeRecords:
    """What rank 0 learned about the hosts: their snapshots by host, and a note for each host without one."""

    snapshots: dict[str, NodeSnapshot] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


class HostReading:
    """One reading of this host (``detect``) on a daemon thread: started, then joined with a wait."""

    def __init__(
        self, environ: Mapping[str, str], sysfs_root: Path = Path("/sys"), detect: Detect = detect_node
    ):
        self.answer: dict[str, Any] | None = None
        self.seconds: float | None = None  # how long the reading took, once done (RunPhases.background_s)
        environ = dict(environ)
        asked = environ.get(CLOUD_METADATA_ENV, "") not in ("", "0")

        def read() -> None:
            began = time.time()
            try:
                snapshot = detect(environ=environ, sysfs_root=sysfs_root, metadata=asked)
                self.answer = snapshot.model_dump(mode="json")
            except Exception as exc:  # any failure to read a node is a note, never a failed run
                self.answer = {"error": " ".join(f"{type(exc).__name__}: {exc}".split())[:300]}
            self.seconds = round(time.time() - began, 3)

        self.thread = threading.Thread(target=read, name="gpufabric-node-snapshot", daemon=True)
        self.thread.start()

    def result(self, wait_s: float) -> dict[str, Any]:
        self.thread.join(wait_s)
        return self.answer or {"error": f"still reading after {wait_s:g} s"}


def read_ahead(local_rank: int, environ: Mapping[str, str]) -> HostReading | None:
    """This host's reading started before the ranks meet, so that ``nvidia-smi`` runs while CUDA and NCCL
    start (issue 36), on the rank that will read the host: the lowest rank of a host is its local rank 0
    under every launcher of ours. ``NodeFacts.begin`` uses it, or leaves it unused on a rank that turns
    out not to read its host (virtual nodes share one)."""
    return HostReading(environ) if local_rank == 0 else None


class NodeFacts:
    """This rank's part in reading the hosts: a reading on the lowest rank of each host, nothing elsewhere."""

    def __init__(self, hosts: RankHosts) -> None:
        self.hosts = hosts
        self._reading: HostReading | None = None

    @classmethod
    def begin(
        cls,
        hosts: RankHosts,
        environ: Mapping[str, str],
        *,
        sysfs_root: Path = Path("/sys"),
        detect: Detect = detect_node,
        ahead: HostReading | None = None,
    ) -> NodeFacts:
        """Start reading this host when this rank reads it (every rank calls it; it returns at once), or
        take the reading ``read_ahead`` started."""
        facts = cls(hosts)
        if hosts.reads_host:
            facts._reading = ahead or HostReading(environ, sysfs_root, detect)
        return facts

    def background(self) -> dict[str, float]:
        """How long this rank's reading of its host took on its thread, once done; empty where it reads
        none (``RunPhases.background_s``)."""
        seconds = self._reading.seconds if self._reading is not None else None
        return {SNAPSHOT_WORK: seconds} if seconds is not None else {}

    def collect(self, exchange: Exchange, wait_s: float = DETECT_WAIT_S) -> NodeRecords | None:
        """Every host's reading on rank 0 (None on the other ranks). Every rank calls it once."""
        payload: dict[str, Any] | None = None
        if self._reading is not None:
            payload = {**self._reading.result(wait_s), "host": self.hosts.host}
        gathered = exchange.gather(payload)
        if gathered is None:
            return None
        return records_of([answer for answer in gathered if answer is not None])


def records_of(answers: list[dict[str, Any]]) -> NodeRecords:
    """Rank 0's reading of the hosts' answers: a snapshot (JSON) or an error, each with its host."""
    records = NodeRecords()
    for answer in answers:
        host = str(answer.pop("host", "?"))
        error = answer.get("error")
        if error is None:
            try:
                records.snapshots[host] = NodeSnapshot.model_validate(answer)
                continue
            except ValidationError as exc:
                error = f"unreadable snapshot ({exc.errors()[0]['msg']})"
        records.notes.append(f"node snapshot of {host}: {error}; this host's shape is not in the result")
    return records
