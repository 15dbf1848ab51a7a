"""The SkyPilot launcher's options (``skypilot.SkyPilotLauncher``), apart from the launcher so
``settings.LauncherSettings`` can hold them without importing it.
"""

from __future__ import annotations

import os

from pydantic import BaseModel, ConfigDict, Field

from gpufabric.boundary_names import PIP_SPEC_ENV
from gpufabric.launch.identity import DEFAULT_MASTER_PORT
from gpufabric.options import LAUNCH_DEFAULTS
from gpufabric.task.model import Task

# What the VM installs: the README's install line for the benchmark engine (torchrun comes with torch).
DEFAULT_PIP_SPEC = "gpufabric[torch]"


class SkyPilotOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    task: Task | None = Field(default=None, description="the task as loaded; None for engine programs")
    cluster: str | None = Field(default=None, description="sky launch -c NAME; default: the task name")
    network_tier: str = LAUNCH_DEFAULTS.tier
    accelerators: str | None = Field(
        default=None, description="for engine programs, e.g. H100:8; a bare H100 gets the GPUs per node"
    )
    pip_spec: str = Field(
        default_factory=lambda: os.environ.get(PIP_SPEC_ENV) or DEFAULT_PIP_SPEC,
        description=f"what an engine program's setup pip-installs; ${PIP_SPEC_ENV} overrides it, e.g. a "
        "pinned version or a wheel URL",
    )
    sky: str = "sky"
    extra_args: list[str] = Field(default_factory=list, description="more sky launch flags, e.g. --down")
    master_port: int = DEFAULT_MASTER_PORT
