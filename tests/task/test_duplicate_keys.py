"""A key written twice in one YAML mapping is refused in one line naming the key and both lines.

PyYAML keeps the last of two equal keys silently: a task with two ``envs:`` sections ran with the second
only, a pod_config with ``NCCL_IB_HCA`` twice with whichever came last.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gpufabric.catalog.loader import entries_from_text
from gpufabric.errors import CatalogError, InputError
from gpufabric.planner import parse_node_labels, read_pod_config
from gpufabric.task.load import task_from_text
from gpufabric.yaml_input import load_yaml

TASK = "name: t\nenvs:\n  A: '1'\nrun: echo\nenvs:\n  B: '2'\n"


def test_a_task_with_two_envs_sections_is_refused_naming_key_and_lines() -> None:
    with pytest.raises(InputError) as caught:
        task_from_text(TASK, source="task.yaml")
    assert str(caught.value) == (
        "task.yaml line 5 column 1: not valid YAML (duplicate key 'envs', first on line 2; keep one of them)"
    )


def test_nested_duplicates_and_other_yaml_inputs_are_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"line 4 .*duplicate key 'A', first on line 3"):
        task_from_text("name: t\nenvs:\n  A: '1'\n  A: '2'\nrun: echo\n", source="t.yaml")
    pod = tmp_path / "pod.yaml"
    pod.write_text("spec:\n  nodeSelector: {}\nspec: {}\n")
    with pytest.raises(InputError, match=r"--pod-config .* line 3 .*duplicate key 'spec', first on line 1"):
        read_pod_config(pod)
    labels = tmp_path / "labels.yaml"
    labels.write_text("zone: a\nzone: b\n")
    with pytest.raises(InputError, match="duplicate key 'zone'"):
        parse_node_labels(f"@{labels}")
    with pytest.raises(CatalogError, match=r"line 3: not valid YAML \(duplicate key 'x'"):
        entries_from_text("items:\n- x: 1\n  x: 2\n", "data.yaml", "items")


def test_merge_keys_and_distinct_keys_still_load() -> None:
    text = "base: &b {a: 1, b: 2}\nitem:\n  <<: *b\n  b: 3\n"
    assert load_yaml(text) == {"base": {"a": 1, "b": 2}, "item": {"a": 1, "b": 3}}
    assert load_yaml("1: x\n'1': y\n") == {1: "x", "1": "y"}  # an int and a string are two keys
