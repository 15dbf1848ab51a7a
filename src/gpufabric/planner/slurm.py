"""Slurm: ``#SBATCH`` options, exported environment and the ``srun`` line (seed 001's Slurm variant).

A plan for a node group of a real cluster (``plan --from-cluster``) pins the job to that group:
``--nodelist`` in Slurm's hostlist form when the job takes the whole group, else ``--constraint`` on
the feature that names the shape (minus ``--exclude`` for that feature's nodes outside the group).
"""

from __future__ import annotations

import re
from collections import defaultdict

from gpufabric.catalog import FabricName
from gpufabric.envnames import check_one_line
from gpufabric.planner.model import Plan, export_lines

_NUMBERED = re.compile(r"^(.*?)(\d+)$")


def slurm_hostlist(names: list[str]) -> str:
    """``["p4d-01", "p4d-02", "p4d-04", "head"]`` -> ``"head,p4d-[01-02,04]"`` (``scontrol show hostnames``
    expands it back). Zero-padded numbers keep their width; names without a trailing number stay whole."""
    plain: list[str] = []
    numbered: dict[tuple[str, int], set[int]] = defaultdict(set)
    for name in sorted(set(names)):
        match = _NUMBERED.match(name)
        if match is None:
            plain.append(name)
            continue
        digits = match.group(2)
        # Width 0 = natural numbers (n9, n10); a leading zero means Slurm must pad to that width.
        width = len(digits) if digits.startswith("0") and len(digits) > 1 else 0
        numbered[(match.group(1), width)].add(int(digits))
    parts = list(plain)
    for (prefix, width), numbers in sorted(numbered.items()):
        ordered = sorted(numbers)
        if len(ordered) == 1:
            parts.append(f"{prefix}{ordered[0]:0{width}d}" if width else f"{prefix}{ordered[0]}")
            continue
        ranges, start = [], ordered[0]
        for previous, current in zip(ordered, [*ordered[1:], None], strict=True):
            if current is not None and current == previous + 1:
                continue
            low, high = (f"{n:0{width}d}" if width else str(n) for n in (start, previous))
            ranges.append(low if start == previous else f"{low}-{high}")
            if current is not None:
                start = current
        parts.append(f"{prefix}[{','.join(ranges)}]")
    return ",".join(sorted(parts))


def _placement(plan: Plan) -> list[str]:
    request = plan.request
    if request.slurm_constraint:
        options = [f"--constraint={request.slurm_constraint}"]
        if request.slurm_exclude:
            options.append(f"--exclude={slurm_hostlist(request.slurm_exclude)}")
        return options
    if request.node_hostnames:
        return [f"--nodelist={slurm_hostlist(request.node_hostnames)}"]
    return []


def render_slurm(plan: Plan) -> None:
    gpus = plan.gpus_per_node
    options = [
        f"--nodes={plan.nodes}",
        *_placement(plan),
        f"--ntasks-per-node={gpus}",
        f"--gpus-per-node={gpus}",
        "--exclusive",
    ]
    # A node name or feature from the cluster ends up on a comment line: a line break there would run.
    lines = ["#!/bin/bash", *(f"#SBATCH {check_one_line(o, where='an #SBATCH option')}" for o in options)]
    lines += export_lines(plan.env)
    lines.append('srun --mpi=pmix --cpu-bind=none "$@"')
    plan.documents["slurm.sbatch"] = {"options": options, "script": "\n".join(lines) + "\n"}
    kind = plan.instance.accelerator_kind if plan.instance else "nvidia-gpu"
    if plan.fabric is FabricName.EFA and kind == "habana-gaudi":
        plan.prerequisites.append(
            "compute nodes run a Habana-supported AMI for DL1 (EFA and libfabric included; HCCL, not NCCL) "
            "and sit in one placement group"
        )
    elif plan.fabric is FabricName.EFA:
        plan.prerequisites.append(
            "compute nodes run an AMI with EFA + aws-ofi-nccl and sit in one placement group"
        )
    elif plan.fabric in (FabricName.GPUDIRECT_TCPX, FabricName.GPUDIRECT_TCPXO):
        plugin = "TCPX" if plan.fabric is FabricName.GPUDIRECT_TCPX else "FasTrak (TCPXO)"
        plan.prerequisites.append(
            f"every compute node runs the RxDM daemon and has the {plugin} NCCL plugin in the library path "
            "of the job (see --platform vm's startup script; Google's A3 Slurm images ship both)"
        )
    elif plan.fabric is FabricName.GPUDIRECT_RDMA:
        plan.prerequisites.append(
            "every compute node has Google's gIB NCCL plugin in /usr/local/nvidia/lib64 and its configs in "
            "/usr/local/gib (the job sets NCCL_NET=gIB: without the plugin NCCL fails to start; see "
            "--platform vm's startup script; Google's A3 Ultra / A4 Slurm images ship it)"
        )
    plan.prerequisites.append("Slurm built with PMIx (`srun --mpi=list` shows pmix)")
