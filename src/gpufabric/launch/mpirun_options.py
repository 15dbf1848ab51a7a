"""The mpirun launcher's options (``mpirun.MpirunLauncher``), apart from the launcher so
``settings.LauncherSettings`` can hold them without importing it.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from gpufabric.launch.identity import DEFAULT_MASTER_PORT
from gpufabric.options import PLACEMENT_DEFAULTS


class MpirunOptions(BaseModel):
    """Where and how mpirun places ranks."""

    model_config = ConfigDict(extra="forbid")

    hosts: list[str] = Field(default_factory=list, description="host or host:slots, one entry per node")
    hostfile: Path | None = None
    mpirun: str = PLACEMENT_DEFAULTS.mpirun
    mca: list[tuple[str, str]] = Field(default_factory=list)
    extra_args: list[str] = Field(default_factory=list, description="passed to mpirun before the program")
    oversubscribe: bool | None = Field(default=None, description="None: only when ranks exceed cores here")
    allow_run_as_root: bool | None = Field(default=None, description="None: when running as root")
    master_port: int = DEFAULT_MASTER_PORT
    virtual_nodes: int = Field(default=0, ge=0, description="this host's ranks as N NCCL nodes; 0: off")
    mps: bool = Field(default=False, description="virtual nodes: a private MPS daemon for the job")
