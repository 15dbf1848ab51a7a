"""The ``plan`` command's inputs that are more than a word: ``--node-labels k=v,k2=v2`` or
``@labels.yaml``, ``--accelerator NAME[:COUNT]`` and ``--pod-config FILE``, read into the types of a
``PlanRequest``. Each failure is one line naming the flag, the value and how to write it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpufabric.errors import InputError, UsageError
from gpufabric.task.load import safe_yaml
from gpufabric.task.model import check_pod_config_shape
from gpufabric.textfile import read_text_file


def _load_yaml(path: Path, flag: str) -> Any:
    try:
        text = read_text_file(path, flag)
    except OSError as exc:
        raise InputError(f"{flag}: cannot read {path}: {exc.strerror}") from exc
    return safe_yaml(text, source=f"{flag} {path}")


def parse_node_labels(text: str | None) -> dict[str, str] | None:
    """``k=v,k2=v2``, or ``@FILE`` holding a mapping of label: value; None when not given."""
    if text is None:
        return None
    if text.startswith("@"):
        labels = _load_yaml(Path(text[1:]), "--node-labels") or {}
        if not isinstance(labels, dict):
            raise InputError(f"--node-labels {text}: the file must hold a mapping of label: value")
        return {str(k): str(v) for k, v in labels.items()}
    labels = {}
    for pair in filter(None, text.split(",")):
        key, sep, value = pair.partition("=")
        if not sep:
            raise UsageError(f"--node-labels: {pair!r} is not KEY=VALUE; write k=v,k2=v2 or @labels.yaml")
        labels[key.strip()] = value.strip()
    return labels


def parse_accelerator(text: str | None) -> tuple[str | None, int | None]:
    """``NAME`` or ``NAME:COUNT`` -> (name, count); (None, None) when not given."""
    if text is None:
        return None, None
    name, sep, count = text.partition(":")
    if not name.strip():
        raise UsageError(f"--accelerator {text}: NAME is missing; write NAME or NAME:COUNT, e.g. H100:8")
    if sep and not count.isdigit():
        raise UsageError(f"--accelerator {text}: COUNT must be a whole number; write NAME:COUNT, e.g. H100:8")
    if sep and int(count) < 1:
        raise UsageError(f"--accelerator {text}: COUNT must be >= 1; write NAME:COUNT, e.g. {name}:8")
    return name.strip(), int(count) if sep else None


def read_pod_config(path: Path | None) -> dict[str, Any] | None:
    """The pod spec fragment in ``path`` (merged into the plan's pods), checked for a Pod's shape."""
    user_pod_config = _load_yaml(path, "--pod-config") if path else None
    if user_pod_config is not None and not isinstance(user_pod_config, dict):
        raise InputError(f"--pod-config: {path} must hold a mapping (a pod spec fragment)")
    if user_pod_config is not None:
        try:
            check_pod_config_shape(user_pod_config)
        except ValueError as exc:
            raise InputError(f"--pod-config {path}: {exc}") from None
    return user_pod_config
