"""Deep merge of a user's ``pod_config`` over the plan's pod patch: the user wins, overrides are reported.

Rules (the same SkyPilot applies to ``config.kubernetes.pod_config``): mappings merge key by key;
``containers``/``initContainers`` merge by position (the user's first container is the main one); lists
of named objects (``env``, ``volumes``, ``volumeMounts``, ``ports``) merge by ``name``; other lists
(``capabilities.add``, ``args``) keep the plan's items and append the user's new ones. A scalar the user
sets differently from the plan is a conflict: the user's value is kept and the conflict is returned.
"""

from __future__ import annotations

import copy
from typing import Any

BY_POSITION = ("containers", "initContainers")


def merge_pod_config(
    plan_patch: dict[str, Any], user: dict[str, Any] | None
) -> tuple[dict[str, Any], list[str]]:
    """``(merged, conflicts)``; inputs untouched. Conflicts read ``path: plan X, yours Y (yours kept)``."""
    conflicts: list[str] = []
    merged = _merge(copy.deepcopy(plan_patch), copy.deepcopy(user or {}), "", conflicts)
    return merged, conflicts


def _merge(ours: Any, theirs: Any, path: str, conflicts: list[str]) -> Any:
    if isinstance(ours, dict) and isinstance(theirs, dict):
        for key, value in theirs.items():
            child = f"{path}.{key}" if path else key
            ours[key] = _merge(ours[key], value, child, conflicts) if key in ours else value
        return ours
    if isinstance(ours, list) and isinstance(theirs, list):
        key = path.rsplit(".", 1)[-1]
        if key in BY_POSITION:
            out = list(ours)
            for i, item in enumerate(theirs):
                out[i : i + 1] = [_merge(out[i], item, f"{path}[{i}]", conflicts)] if i < len(out) else [item]
            return out
        if all(isinstance(i, dict) and "name" in i for i in ours + theirs):
            index = {item["name"]: n for n, item in enumerate(ours)}
            out = list(ours)
            for item in theirs:
                if item["name"] in index:
                    n = index[item["name"]]
                    out[n] = _merge(out[n], item, f"{path}[name={item['name']}]", conflicts)
                else:
                    out.append(item)
            return out
        return ours + [item for item in theirs if item not in ours]
    if ours != theirs:
        conflicts.append(f"{path}: plan {ours!r}, yours {theirs!r} (yours kept)")
    return theirs
