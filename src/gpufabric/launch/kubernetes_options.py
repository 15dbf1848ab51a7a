"""What ``--on kubernetes`` is given (``KubernetesOptions``) and the names its objects carry: shared by the
launcher that renders the manifests (``kubernetes``) and the run that applies and follows them
(``kubernetes_run``), which imports this module instead of the launcher's.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from gpufabric.launch.identity import DEFAULT_MASTER_PORT
from gpufabric.options import LAUNCH_DEFAULTS

JOB_NAME_LABEL = "gpufabric.io/job"
MAIN_CONTAINER = "main"


class KubernetesOptions(BaseModel):
    """Where and how the pods run."""

    model_config = ConfigDict(extra="forbid")

    namespace: str = LAUNCH_DEFAULTS.namespace
    image: str | None = Field(default=None, description="container image; default: the task's image_id")
    job_name: str | None = Field(default=None, description="default: the program label")
    plan_patch: dict[str, Any] = Field(default_factory=dict, description="the planner's pod patch")
    pod_config: dict[str, Any] = Field(
        default_factory=dict, description="the user's config.kubernetes.pod_config"
    )
    gpu_resource: str = "nvidia.com/gpu"
    master_port: int = DEFAULT_MASTER_PORT
    kubeconfig: str | None = None
    context: str | None = None
    keep: bool = Field(default=False, description="leave the objects in place after the run (for debugging)")
    poll_interval_s: float = Field(default=2.0, gt=0)
    start_timeout_s: float = Field(
        default=3600.0,
        gt=0,
        description="without --timeout, delete the Job when no pod has started after this long "
        "(unschedulable pods must not hang the caller forever)",
    )
