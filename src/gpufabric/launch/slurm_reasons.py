"""Slurm's own words as one line with the fix: ``sbatch``'s refusals and the ``Reason=`` a PENDING job
waits for (``scontrol show job``), split into waits that end by themselves (Priority, Resources) and
requests the cluster can never grant (PartitionNodeLimit, BadConstraints, a per-job QOS limit ...).

A refusal or a hopeless reason about the request itself (too many nodes, a GPU gres the cluster lacks,
a bad partition) is a ``UsageError`` (exit 2); one about the cluster (no controller, MUNGE, down nodes)
is a ``LaunchError`` (exit 1). Slurm's own line stays at the end of every message, so nothing it said
is lost.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from gpufabric.errors import GpufabricError, LaunchError, UsageError

_CONTROLLER_FIX = (
    "start slurmctld or point SLURM_CONF at the cluster's slurm.conf, then check with `scontrol ping`"
)

# (text sbatch/scontrol print, what it means and the fix, error class); first match wins.
_REFUSALS: tuple[tuple[str, str, type[GpufabricError]], ...] = (
    (
        "Could not establish a configuration source",
        "no Slurm controller is configured or reachable from here (no slurm.conf, no DNS SRV record); "
        "set SLURM_CONF to the cluster's slurm.conf or run from a node of the cluster",
        LaunchError,
    ),
    (
        "Unable to process configuration file",
        "Slurm's configuration file cannot be read; set SLURM_CONF to the cluster's slurm.conf or run "
        "from a node of the cluster",
        LaunchError,
    ),
    ("Unable to contact slurm controller", f"Slurm controller not reachable; {_CONTROLLER_FIX}", LaunchError),
    ("Connection refused", f"Slurm controller not reachable; {_CONTROLLER_FIX}", LaunchError),
    (
        "Socket timed out",
        "the Slurm controller did not answer in time (overloaded?); try again, and check `scontrol ping`",
        LaunchError,
    ),
    (
        "Munge",
        "MUNGE authentication failed (munged not running here, or its key differs from the "
        "controller's); start munged with the cluster's munge.key (systemctl start munge)",
        LaunchError,
    ),
    (
        "Invalid authentication credential",
        "MUNGE authentication failed (this host's munge.key differs from the controller's); copy the "
        "cluster's munge.key here and restart munged",
        LaunchError,
    ),
    (
        "Invalid generic resource (gres) specification",
        "the cluster has no GPU gres (or not as many per node as asked); pass --no-slurm-gpus to "
        "request no GPUs from Slurm, or configure GresTypes=gpu and gres.conf on the nodes (`sinfo -o "
        "'%N %G'` lists each node's gres)",
        UsageError,
    ),
    ("Invalid partition", "list partitions with `sinfo -s` and pass --slurm-partition NAME", UsageError),
    (
        "Requested node configuration is not available",
        "the cluster has no nodes of that shape (GPUs, tasks per node): check `sinfo -N -l`, or pass "
        "--slurm-nodes / --no-slurm-gpus",
        UsageError,
    ),
    (
        "Node count specification invalid",
        "more nodes than the partition has; pass --slurm-nodes N to pack the nodes on fewer Slurm "
        "nodes, or ask for fewer nodes (`sinfo -s` lists each partition's nodes)",
        UsageError,
    ),
    (
        "More processors requested than permitted",
        "more tasks per node than a node has CPUs; spread them with --slurm-nodes N or ask for fewer",
        UsageError,
    ),
    (
        "Requested time limit is invalid",
        "--slurm-time exceeds the partition's limit; pass a shorter one (`sinfo -o '%P %l'` lists them)",
        UsageError,
    ),
    (
        "Invalid account",
        "use an account you belong to (`sacctmgr show assoc user=$USER format=account,partition`)",
        UsageError,
    ),
    (
        "Job violates accounting/QOS policy",
        "the job exceeds a limit of your account or QOS (nodes, GPUs, time or jobs); ask for less "
        "(`sacctmgr show qos` lists the limits)",
        UsageError,
    ),
    (
        "Invalid feature specification",
        "a --constraint names a feature no node has (`sinfo -o '%N %f'` lists them)",
        UsageError,
    ),
    (
        "Invalid node name specified",
        "a node named in the job does not exist (`sinfo -N` lists them)",
        UsageError,
    ),
)


def slurm_error(text: str, tool: str) -> GpufabricError:
    """The error for a failed Slurm client call: what it means, the fix, then the tool's last line."""
    line = next((s.strip() for s in reversed(text.splitlines()) if s.strip()), "failed")
    own = line if line.startswith(f"{tool}:") else f"{tool}: {line}"
    for needle, meaning, kind in _REFUSALS:
        if needle in text:
            return kind(f"{meaning} ({own})")
    return LaunchError(own)


def translate_slurm_error(text: str, tool: str) -> str:
    return str(slurm_error(text, tool))


@dataclass(frozen=True)
class PendingReason:
    """Why a job is still PENDING, in words, and whether waiting can ever help."""

    code: str
    meaning: str
    fix: str = ""
    never_starts: type[GpufabricError] | None = None

    def describe(self) -> str:
        return f"{self.code}: {self.meaning}"


# Reasons that end by themselves: the job starts when others finish or a time comes.
_WAITS: dict[str, str] = {
    "Priority": "jobs of higher priority are ahead of it in the queue",
    "Resources": "waiting for the nodes, CPUs or GPUs it asked for to become free",
    "BeginTime": "it may not start before its --begin time",
    "Dependency": "waiting for the jobs it depends on to finish",
    "JobHeldUser": "held by its user; release it with `scontrol release JOBID`",
    "JobHeldAdmin": "held by an administrator",
    "PartitionDown": "its partition is DOWN until an administrator brings it up",
    "PartitionInactive": "its partition is INACTIVE until an administrator brings it up",
    "Reservation": "waiting for its advanced reservation to start",
    "Licenses": "waiting for licenses",
    "ReqNodeNotAvail": "a node it needs is busy or reserved",
    "Nodes_required_for_job_are_DOWN,_DRAINED_or_reserved_for_jobs_in_higher_priority_partitions": (
        "the nodes it needs are down, drained or reserved (`sinfo -R` shows why)"
    ),
}
# Per-job limits never change while the job waits; per-user/account/group limits free up.
_PER_JOB_LIMIT = re.compile(r"^(QOS|Assoc)\w*PerJob")


# Requests the cluster can never grant: (meaning, fix).
_HOPELESS: dict[str, tuple[str, str]] = {
    "PartitionTimeLimit": (
        "its time limit exceeds partition {partition}'s MaxTime",
        "pass a shorter --slurm-time (`sinfo -o '%P %l'` lists the limits)",
    ),
    "PartitionConfig": (
        "it asks for more than partition {partition} allows (CPUs, tasks or memory per node)",
        "check `scontrol show partition {partition}`; spread the ranks with --slurm-nodes or ask for fewer",
    ),
    "BadConstraints": (
        "no node can satisfy its constraints (GPUs, features, memory or tasks per node)",
        "check `sinfo -N -l`; pass --no-slurm-gpus or drop the constraint",
    ),
    "InvalidAccount": (
        "its account is not valid here",
        "use an account you belong to (`sacctmgr show assoc user=$USER`)",
    ),
    "InvalidQOS": (
        "its QOS is not valid here",
        "use a QOS of your account (`sacctmgr show assoc user=$USER`)",
    ),
    "AccountNotAllowed": (
        "partition {partition} does not accept its account",
        "pass another --slurm-partition or account",
    ),
    "QOSNotAllowed": ("partition {partition} does not accept its QOS", "use another partition or QOS"),
}


def pending_reason(
    info: Mapping[str, str],
    *,
    partition_limits: Mapping[str, str] | None = None,
    virtual_nodes: int | None = None,
) -> PendingReason | None:
    """The reason of a PENDING job (``scontrol show job -o`` fields), or None before Slurm names one.
    ``partition_limits``: ``scontrol show partition -o`` fields of its partition, when looked up;
    ``virtual_nodes``: the task's nodes, which ``--slurm-nodes`` must divide."""
    raw = info.get("Reason", "")
    if info.get("JobState") != "PENDING" or raw in ("", "None", "(null)"):
        return None
    code, _, detail = raw.partition(",")
    partition = info.get("Partition", "?")
    limits = partition_limits or {}
    node_limit = _least(limits.get("TotalNodes"), limits.get("MaxNodes"))
    asked_nodes = _least(info.get("NumNodes", "").split("-")[0])
    # Slurm names the first partition check that fails (PartitionConfig on a box with few CPUs,
    # PartitionNodeLimit on one with many); too many nodes is the one to fix first either way.
    too_many_nodes = node_limit is not None and asked_nodes is not None and asked_nodes > node_limit
    if code == "PartitionNodeLimit" or (code == "PartitionConfig" and too_many_nodes):
        has = f"has {node_limit} node(s)" if node_limit is not None else "has fewer nodes"
        pack = _packing(node_limit or 1, virtual_nodes or 1)
        return PendingReason(
            code,
            f"partition {partition} {has}, fewer than the {asked_nodes or '?'} asked for",
            f"use --slurm-nodes {pack} to pack the nodes on fewer Slurm nodes, or ask for fewer nodes",
            UsageError,
        )
    cpus, partition_cpus = _least(info.get("NumCPUs")), _least(limits.get("TotalCPUs"))
    if (
        code == "PartitionConfig"
        and cpus is not None
        and partition_cpus is not None
        and cpus > partition_cpus
    ):
        return PendingReason(
            code,
            f"it needs {cpus} CPUs and partition {partition} has {partition_cpus}",
            "ask for fewer ranks, or pass --slurm-partition with a bigger partition",
            UsageError,
        )
    if code == "ReqNodeNotAvail" and "UnavailableNodes:" in detail:
        down = detail.split("UnavailableNodes:", 1)[1].strip("_ ") or "?"
        return PendingReason(
            code,
            f"nodes it requires are down, drained or not responding ({down})",
            f"`sinfo -R` shows why; resume them (scontrol update nodename={down} state=resume) or "
            "leave them out of the job",
            LaunchError,
        )
    hopeless = _HOPELESS.get(code)
    if hopeless is not None:
        meaning, fix = (text.format(partition=partition) for text in hopeless)
        return PendingReason(code, meaning, fix, UsageError)
    if _PER_JOB_LIMIT.match(code):
        return PendingReason(
            code,
            "it exceeds a per-job limit of its QOS or account",
            "ask for fewer nodes, GPUs or time (`sacctmgr show qos` lists the limits)",
            UsageError,
        )
    if code == "DependencyNeverSatisfied":
        return PendingReason(
            code, "a job it depends on failed", "cancel it or fix the dependency", LaunchError
        )
    return PendingReason(code, _WAITS.get(code, "Slurm's reason; see `scontrol show job JOBID`"))


def _packing(partition_nodes: int, virtual_nodes: int) -> int:
    """The most Slurm nodes, at most the partition's, that the task's nodes split evenly over."""
    return max(n for n in range(1, max(1, min(partition_nodes, virtual_nodes)) + 1) if virtual_nodes % n == 0)


def _least(*values: str | None) -> int | None:
    """The smallest of the numbers among ``values`` (Slurm writes UNLIMITED, N/A ... for none)."""
    numbers = [int(v) for v in values if v and v.isdigit()]
    return min(numbers) if numbers else None
