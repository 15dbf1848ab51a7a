"""Slurm: ``#SBATCH`` options, exported environment and the ``srun`` line (seed 001's Slurm variant)."""

from __future__ import annotations

import shlex

from gpufabric.catalog import FabricName
from gpufabric.planner.model import Plan


def render_slurm(plan: Plan) -> None:
    gpus = plan.gpus_per_node
    options = [f"--nodes={plan.nodes}", f"--ntasks-per-node={gpus}", f"--gpus-per-node={gpus}", "--exclusive"]
    lines = ["#!/bin/bash", *(f"#SBATCH {o}" for o in options)]
    lines += [f"export {k}={shlex.quote(v)}" for k, v in sorted(plan.env.items())]
    lines.append('srun --mpi=pmix --cpu-bind=none "$@"')
    plan.documents["slurm.sbatch"] = {"options": options, "script": "\n".join(lines) + "\n"}
    if plan.fabric is FabricName.EFA:
        plan.prerequisites.append(
            "compute nodes run an AMI with EFA + aws-ofi-nccl and sit in one placement group"
        )
    elif plan.fabric in (FabricName.GPUDIRECT_TCPX, FabricName.GPUDIRECT_TCPXO):
        plan.prerequisites.append(
            "every compute node runs the RxDM daemon (see --platform vm's startup script)"
        )
    plan.prerequisites.append("Slurm built with PMIx (`srun --mpi=list` shows pmix)")
