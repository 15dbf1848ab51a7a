"""Tasks: the SkyPilot-compatible task YAML subset gpufabric launches (see ``model`` and ``load``)."""

from typing import TYPE_CHECKING

from gpufabric._lazy import lazy_package

if TYPE_CHECKING:  # the public names, each imported on first use (gpufabric._lazy)
    from gpufabric.task.load import apply_env_overrides, load_task, parse_env_assignments, task_from_text
    from gpufabric.task.model import Accelerators, KubernetesTaskConfig, Resources, Task, TaskConfig
lazy_package(__name__)

__all__ = [
    "Accelerators",
    "KubernetesTaskConfig",
    "Resources",
    "Task",
    "TaskConfig",
    "apply_env_overrides",
    "load_task",
    "parse_env_assignments",
    "task_from_text",
]
