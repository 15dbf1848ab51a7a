"""Reading YAML that people wrote (task files, ``--pod-config``, ``--node-labels @FILE``, kube configs, our
catalog data): ``yaml.safe_load`` semantics, plus a refusal of duplicate keys.

YAML 1.2 says the keys of a mapping are unique; PyYAML silently keeps the last one, so a task with two
``envs:`` sections, or ``NCCL_IB_HCA`` written twice, ran with half of what its author saw. Here the
second occurrence is a ``yaml.constructor.ConstructorError`` whose ``problem`` names the key and both
lines and whose ``problem_mark`` points at the duplicate, so every caller's existing one-line YAML error
(``FILE line L column C: not valid YAML (duplicate key 'envs', first on line 2)``) says where.
Merge keys (``<<: *defaults``) still override as YAML's merge type says.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode

_MERGE_TAG = "tag:yaml.org,2002:merge"


class UniqueKeyLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses a key written twice in one mapping."""

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        first_line: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == _MERGE_TAG:
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                seen = first_line.get(key)
            except TypeError:  # an unhashable key: SafeLoader's own error says so
                continue
            line = key_node.start_mark.line + 1
            if seen is not None:
                raise ConstructorError(
                    "while constructing a mapping",
                    node.start_mark,
                    f"duplicate key {str(key)[:60]!r}, first on line {seen}; keep one of them",
                    key_node.start_mark,
                )
            first_line[key] = line
        return super().construct_mapping(node, deep=deep)


def load_yaml(text: str) -> Any:
    """The one document in ``text``, as ``yaml.safe_load`` would build it, duplicate keys refused."""
    loader = UniqueKeyLoader(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()
