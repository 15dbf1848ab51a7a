"""Following why a submitted Slurm job is still PENDING (``slurm_reasons`` says what each reason means):
each new reason is said once on the job's output, so a job that waits does not look hung, and a reason
that can never clear is handed back, once it has settled, for the caller to cancel the job with its fix.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping

from gpufabric.launch.base import OutputSink
from gpufabric.launch.slurm_reasons import PendingReason, pending_reason


class PendingWatch:
    """Follows why the job is PENDING: says each new reason once on the output (a job that waits must
    not look hung) and looks up the partition's size when the reason is one of its limits.

    A reason that means "never" counts only once it has held for ``SETTLE_S``: right after submission
    slurmctld may name a first guess (PartitionConfig) and a moment later the real one
    (PartitionNodeLimit), and the fix we print must be the real one's."""

    SETTLE_S = 2.0

    def __init__(
        self,
        job_id: str,
        virtual_nodes: int,
        on_output: OutputSink | None,
        partition_fields: Callable[[str], Mapping[str, str]],
    ) -> None:
        self.job_id = job_id
        self.virtual_nodes = virtual_nodes
        self.on_output = on_output
        self.partition_fields = partition_fields
        self.current: PendingReason | None = None
        self.partitions: dict[str, Mapping[str, str]] = {}
        self.since = 0.0
        self.said: str | None = None

    def update(self, info: Mapping[str, str]) -> PendingReason | None:
        """The reason the job waits for; one with ``never_starts`` only once it has settled."""
        limits = None
        if info.get("Reason") in ("PartitionNodeLimit", "PartitionConfig"):
            limits = self._partition_limits(info.get("Partition", ""))
        reason = pending_reason(info, partition_limits=limits, virtual_nodes=self.virtual_nodes)
        if reason is None or self.current is None or reason.code != self.current.code:
            self.since = time.monotonic()
        self.current = reason
        if reason is None:
            return None
        if reason.never_starts is not None:
            return reason if time.monotonic() - self.since >= self.SETTLE_S else None
        text = reason.describe()
        if text != self.said and self.on_output is not None:
            self.on_output("[slurm]", f"Slurm job {self.job_id} is PENDING ({text}); waiting")
        self.said = text
        return reason

    def describe(self) -> str | None:
        return self.current.describe() if self.current is not None else None

    def _partition_limits(self, partition: str) -> Mapping[str, str]:
        """The partition's size (TotalNodes, MaxNodes, TotalCPUs), looked up once per job."""
        if partition and partition not in self.partitions:
            self.partitions[partition] = self.partition_fields(partition)
        return self.partitions.get(partition, {})
