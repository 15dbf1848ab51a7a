"""The launch tests' one-host Slurm (tests/launch/slurm_harness.py) with what a GPU cluster adds.

``GresSlurmCluster`` only appends what a GPU cluster's slurm.conf has and the harness's does not:
``GresTypes``, a node ``Gres=`` line with GPUs and an EFA count, a gres.conf, and node ``Features``
naming the instance type as AWS ParallelCluster does. GPU GRES need a ``File=`` that is a character
device; this machine has no GPU, so those files are character devices with /dev/null's numbers, made
with mknod under the cluster's temp dir (root only). What scontrol then reports is real Slurm output.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "launch"))

from slurm_harness import SlurmCluster

INVENTORY_FIXTURES = Path(__file__).parents[1] / "fixtures" / "inventory"
SLURM_GPUS = 4
SLURM_EFA = 2
SLURM_FEATURES = "p4d.24xlarge,efa"


class GresSlurmCluster(SlurmCluster):
    """The harness's one-node Slurm, with GPU and EFA GRES and instance-type features on its node."""

    def _write_conf(self) -> None:
        super()._write_conf()
        devices = self.root / "dev"
        devices.mkdir(exist_ok=True)
        for index in range(SLURM_GPUS):
            os.mknod(devices / f"nvidia{index}", 0o600 | stat.S_IFCHR, os.makedev(1, 3))
        lines = self.conf_path.read_text().splitlines()
        lines = [
            f"{line} Gres=gpu:h100:{SLURM_GPUS},efa:{SLURM_EFA} Features={SLURM_FEATURES}"
            if line.startswith("NodeName=")
            else line
            for line in lines
        ]
        self.conf_path.write_text("\n".join(["GresTypes=gpu,efa", *lines]) + "\n")
        (self.conf_path.parent / "gres.conf").write_text(
            f"NodeName={self.hostname} Name=gpu Type=h100 File={devices}/nvidia[0-{SLURM_GPUS - 1}]\n"
            f"NodeName={self.hostname} Name=efa Count={SLURM_EFA}\n"
        )
