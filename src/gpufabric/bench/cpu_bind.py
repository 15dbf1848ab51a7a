"""Which CPUs a rank's threads run on (``GPUFABRIC_CPU_BIND``), as mpirun binds nccl-tests' ranks.

``mpirun -np N`` (OpenMPI 4) binds each process by default: to a core for two processes or fewer, to a
package beyond (on a one-socket host: every CPU, no binding at all). A rank whose threads may run on any
CPU is moved between cores by the scheduler, and at small sizes, where a collective's time is the host's
launch path, whole runs shift. On 4x H200 (docs/benchmarks.md §15) four rounds of one command read the
median of broadcast's 8 B - 64 KB within a 26% range unbound, 10% with ``share`` and 9% with ``core``
(17:58 UTC); but a bound run of all ten collectives on the next machine (18:02) agreed with nccl-tests
(which ``mpirun -np 4`` leaves unbound on that one-socket host) at 388 of 524 size-placements, where
unbound runs had agreed at 461-490 on the machines before: both tools' small sizes jumped between ~7.5
and ~10.5 us there, which three runs cannot separate from the binding. So the default stays ``none``,
the placement nccl-tests gets under mpirun on such a host.

The policies: ``none`` (the default: the launcher's placement, kept), ``share`` (local rank ``r`` of ``n``
takes the ``r``-th of ``n`` equal, contiguous shares of the cores it may use, every hyper-thread of a
core in the same share: the rank's own threads and NCCL's, which inherit it, stay together and off the
other ranks'), ``core`` (one CPU, as ``mpirun --bind-to core``) and ``auto``: ``share`` where every CPU
the rank may use lies on one NUMA node, else ``none`` with a note, because a share cut in CPU order does
not follow which node each GPU hangs off, and a rank on the far node pays for every launch. A rank whose
CPUs were already narrowed (``taskset``, a Slurm cgroup, mpirun's own binding) is left as it is. The
calling thread's set is changed: call it before NCCL starts its threads.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from gpufabric.boundary_names import CPU_BIND_ENV
from gpufabric.errors import UsageError

POLICIES = ("none", "auto", "share", "core")
SYS_CPU = Path("/sys/devices/system/cpu")
SYS_NODE = Path("/sys/devices/system/node")


def parse_cpulist(text: str) -> list[int]:
    """The kernel's CPU list format (``0-3,8,10-11``) as CPU numbers; empty text, no CPUs."""
    cpus: list[int] = []
    for part in text.strip().split(","):
        if not part:
            continue
        low, _, high = part.partition("-")
        cpus.extend(range(int(low), int(high or low) + 1))
    return cpus


def cores_of(allowed: list[int], sys_cpu: Path = SYS_CPU) -> list[list[int]]:
    """``allowed`` grouped by physical core (``topology/thread_siblings_list``), in the order of each
    core's first CPU; a CPU whose siblings cannot be read is a core of its own."""
    allowed_set = set(allowed)
    seen: set[int] = set()
    cores: list[list[int]] = []
    for cpu in sorted(allowed):
        if cpu in seen:
            continue
        try:
            text = (sys_cpu / f"cpu{cpu}" / "topology" / "thread_siblings_list").read_text()
            siblings = [c for c in parse_cpulist(text) if c in allowed_set] or [cpu]
        except (OSError, ValueError):
            siblings = [cpu]
        seen.update(siblings)
        cores.append(sorted(siblings))
    return cores


def numa_nodes_of(allowed: list[int], sys_node: Path = SYS_NODE) -> int | None:
    """How many NUMA nodes ``allowed`` spans (``node*/cpulist``); None where the kernel does not say."""
    try:
        lists = [parse_cpulist((node / "cpulist").read_text()) for node in sys_node.glob("node[0-9]*")]
    except (OSError, ValueError):
        return None
    if not lists:
        return None
    return sum(1 for cpus in lists if set(cpus) & set(allowed))


def chosen_cpus(cores: list[list[int]], local_rank: int, local_size: int, policy: str) -> list[int] | None:
    """The CPUs for this rank under ``policy`` (``share`` or ``core``; ``cores`` from ``cores_of``), or
    None to leave the placement alone. With fewer cores than ranks the shares are cut from the CPUs."""
    if policy not in ("share", "core") or local_size < 1:
        return None
    units = cores if len(cores) >= local_size else [[cpu] for core in cores for cpu in core]
    if len(units) < local_size:
        return None
    share = len(units) // local_size
    index = local_rank % local_size
    mine = [cpu for unit in units[index * share : (index + 1) * share] for cpu in unit]
    return mine[:1] if policy == "core" else mine


def resolved_policy(policy: str, allowed: list[int], sys_node: Path = SYS_NODE) -> tuple[str, str]:
    """``auto`` made concrete: (policy, why) - ``share`` on one NUMA node, else ``none``."""
    if policy != "auto":
        return policy, ""
    nodes = numa_nodes_of(allowed, sys_node)
    if nodes == 1:
        return "share", " (auto: one NUMA node)"
    where = "NUMA nodes not readable" if nodes is None else f"the CPUs span {nodes} NUMA nodes"
    return (
        "none",
        f"CPU binding auto left the launcher's placement: {where}; set {CPU_BIND_ENV}=share to bind",
    )


def check_setting(environ: Mapping[str, str]) -> None:
    """A GPUFABRIC_CPU_BIND other than the policies is one line, before anything starts."""
    policy = (environ.get(CPU_BIND_ENV) or "none").strip().lower()
    if policy not in POLICIES:
        raise UsageError(
            f"{CPU_BIND_ENV}={policy!r}: choose one of {', '.join(POLICIES)} "
            "(none, the default: the launcher's placement; auto: share on one NUMA node)"
        )


def bind(local_rank: int, local_size: int | None, environ: Mapping[str, str] | None = None) -> str | None:
    """Apply the policy to the calling thread; what was done, in words (None: nothing)."""
    environ = os.environ if environ is None else environ
    policy = (environ.get(CPU_BIND_ENV) or "none").strip().lower()
    if policy not in POLICIES or policy == "none" or not hasattr(os, "sched_getaffinity"):
        return None
    allowed = sorted(os.sched_getaffinity(0))
    if len(allowed) < (os.cpu_count() or len(allowed)):
        return None  # narrowed already by whoever started us: theirs to decide
    policy, why = resolved_policy(policy, allowed)
    if policy == "none":
        return why
    if not local_size:  # the launcher did not say how many ranks share this host: no share can be cut
        return f"CPU binding {policy} not applied: the launcher gave no local world size"
    cpus = chosen_cpus(cores_of(allowed), local_rank, local_size, policy)
    if not cpus:
        return None
    os.sched_setaffinity(0, cpus)
    return f"CPU binding {policy}{why}: local rank {local_rank} on CPUs {_ranges(cpus)}"


def _ranges(cpus: list[int]) -> str:
    """``[0, 1, 2, 32, 33, 34]`` as ``0-2,32-34`` (the kernel's list format)."""
    parts: list[str] = []
    start = prev = cpus[0]
    for cpu in [*cpus[1:], None]:
        if cpu is not None and cpu == prev + 1:
            prev = cpu
            continue
        parts.append(f"{start}-{prev}" if prev != start else str(start))
        if cpu is not None:
            start = prev = cpu
    return ",".join(parts)
