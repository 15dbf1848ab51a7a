"""Which CPUs a rank's threads run on (``GPUFABRIC_CPU_BIND``), as mpirun binds nccl-tests' ranks.

``mpirun -np N`` (OpenMPI 4) binds each process by default: to a core for two processes or fewer, to a
package beyond. A rank whose threads may run on any CPU is moved between cores by the scheduler, and at
small sizes, where a collective's time is the host's launch path, that costs: on 2 H200s nccl-tests read
5-10% slower at 32 B - 512 KB under ``--bind-to none`` than under its default binding (docs/benchmarks.md,
issue 36). The policies: ``none`` (the launcher's placement, kept), ``share`` (local rank ``r`` of ``n``
takes the ``r``-th of ``n`` equal, contiguous shares of the CPUs it may use: the rank's own threads and
NCCL's, which inherit it, stay together and off the other ranks'), ``core`` (one CPU, as ``mpirun
--bind-to core``). A rank whose CPUs were already narrowed (``taskset``, a Slurm cgroup, mpirun's own
binding) is left as it is. The calling thread's set is changed: call it before NCCL starts its threads.
The shares are cut from the CPU numbers in order: on a host that numbers hyper-thread siblings apart
(0..N-1, then N..2N-1) a share is not a set of whole cores, and nothing here follows the GPU's NUMA node;
that is why ``none`` is the default (and measured no worse, docs/engines.md).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from gpufabric.boundary_names import CPU_BIND_ENV
from gpufabric.errors import UsageError

POLICIES = ("none", "share", "core")


def chosen_cpus(allowed: list[int], local_rank: int, local_size: int, policy: str) -> list[int] | None:
    """The CPUs for this rank under ``policy``, or None to leave the placement alone."""
    if policy == "none" or local_size < 1 or len(allowed) < local_size:
        return None
    share = len(allowed) // local_size
    mine = allowed[local_rank % local_size * share : (local_rank % local_size + 1) * share]
    return mine[:1] if policy == "core" else mine


def check_setting(environ: Mapping[str, str]) -> None:
    """A GPUFABRIC_CPU_BIND other than the policies is one line, before anything starts."""
    policy = (environ.get(CPU_BIND_ENV) or "none").strip().lower()
    if policy not in POLICIES:
        raise UsageError(
            f"{CPU_BIND_ENV}={policy!r}: choose one of {', '.join(POLICIES)} (none: the launcher's placement)"
        )


def bind(local_rank: int, local_size: int | None, environ: Mapping[str, str] | None = None) -> str | None:
    """Apply the policy to the calling thread; what was done, in words (None: nothing)."""
    environ = os.environ if environ is None else environ
    policy = (environ.get(CPU_BIND_ENV) or "none").strip().lower()
    if policy not in POLICIES or policy == "none" or not hasattr(os, "sched_getaffinity"):
        return None
    if not local_size:  # the launcher did not say how many ranks share this host: no share can be cut
        return f"CPU binding {policy} not applied: the launcher gave no local world size"
    allowed = sorted(os.sched_getaffinity(0))
    if len(allowed) < (os.cpu_count() or len(allowed)):
        return None  # narrowed already by whoever started us: theirs to decide
    cpus = chosen_cpus(allowed, local_rank, local_size, policy)
    if not cpus:
        return None
    os.sched_setaffinity(0, cpus)
    return f"CPU binding {policy}: local rank {local_rank} on CPUs {cpus[0]}-{cpus[-1]}"
