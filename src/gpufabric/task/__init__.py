"""Tasks: the SkyPilot-compatible task YAML subset gpufabric launches (see ``model`` and ``load``)."""

from gpufabric.task.load import apply_env_overrides, load_task, parse_env_assignments, task_from_text
from gpufabric.task.model import Accelerators, KubernetesTaskConfig, Resources, Task, TaskConfig

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
