"""Every launcher's options in one model (``LauncherSettings``): what the running commands fill from their
flags and ``registry.make_launcher`` hands the chosen launcher's ``from_settings``. Apart from the
launchers, so each can type its ``from_settings`` without an import loop.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from gpufabric.launch.kubernetes_options import KubernetesOptions
from gpufabric.launch.mpirun_options import MpirunOptions
from gpufabric.launch.skypilot_options import SkyPilotOptions
from gpufabric.launch.slurm_options import SlurmOptions


class LauncherSettings(BaseModel):
    """Every backend's options; only the chosen backend's are used."""

    model_config = ConfigDict(extra="forbid")

    mpirun: MpirunOptions = Field(default_factory=MpirunOptions)
    slurm: SlurmOptions = Field(default_factory=SlurmOptions)
    kubernetes: KubernetesOptions = Field(default_factory=KubernetesOptions)
    skypilot: SkyPilotOptions = Field(default_factory=SkyPilotOptions)
    local_master_port: int | None = None
    local_virtual_nodes: int | None = None
    local_mps: bool = False
