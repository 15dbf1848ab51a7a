"""Hostile task files: every one is a single InputError line naming the file, never a traceback."""

from __future__ import annotations

import pytest

from gpufabric.errors import InputError
from gpufabric.task import task_from_text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("run: x\nnum_nodes: !!int abc", "t.yaml: a YAML value cannot be converted (invalid literal"),
        ("run: x\nenvs: " + "[" * 5000 + "]" * 5000, "t.yaml: YAML nested too deeply to read"),
        ("run: x\nnum_nodes: " + "9" * 5000, "t.yaml: a YAML value cannot be converted (Exceeds the limit"),
        ("run: x\nnum_nodes: 30000000", "t.yaml: num_nodes: 30000000 is above the limit of 10000"),
        (
            "run: x\nconfig: {kubernetes: {pod_config: {spec: {containers: [3]}}}}",
            "pod_config.spec.containers[0] must be a mapping (name, image, env ...), not int '3'",
        ),
        (
            "run: x\nconfig: {kubernetes: {pod_config: {spec: {containers: {a: 1}}}}}",
            "pod_config.spec.containers must be a list of containers, not dict",
        ),
        ("run: x\nconfig: {kubernetes: {pod_config: {spec: [1]}}}", "pod_config.spec must be a mapping"),
    ],
)
def test_hostile_task_is_one_line(text: str, expected: str) -> None:
    with pytest.raises(InputError) as refused:
        task_from_text(text, source="t.yaml")
    message = str(refused.value)
    assert expected in message and "\n" not in message


def test_the_node_limit_itself_loads() -> None:
    assert task_from_text("run: x\nnum_nodes: 10000", source="t.yaml").num_nodes == 10000
