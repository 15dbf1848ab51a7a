"""Slurm hostlist syntax (``gpu[001-004,010]``), expanded as ``scontrol show hostnames`` prints it: the node
lists a user gives ``isolate`` and ``certify`` (``analysis.isolate.nodes``), and the allocation a Slurm step
runs in (``SLURM_JOB_NODELIST``, ``slurm_steps``). Parsing only, as ``hosts`` is for OpenMPI's hostfiles.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from gpufabric.errors import InputError, UsageError

SLURM_NODELIST = "SLURM_JOB_NODELIST"
"""The allocation's nodes in Slurm hostlist syntax; a real ``--on slurm`` run's default node source."""
_BRACKETS = re.compile(r"\[([^\[\]]*)\]")
NODE_NAME = re.compile(r"^[A-Za-z0-9_.:\-]+$")


def split_hostlist(text: str) -> list[str]:
    """The top-level items of a Slurm hostlist: ``a[01-02,05],b3`` -> ``a[01-02,05]``, ``b3``."""
    items: list[str] = []
    depth = start = 0
    for at, char in enumerate(text):
        depth += {"[": 1, "]": -1}.get(char, 0)
        if depth not in (0, 1):
            raise UsageError(f"node list {text!r}: unbalanced or nested brackets; write e.g. gpu[01-04,07]")
        if char == "," and depth == 0:
            items.append(text[start:at])
            start = at + 1
    if depth:
        raise UsageError(f"node list {text!r}: a '[' is never closed; write e.g. gpu[01-04,07]")
    items.append(text[start:])
    return [item.strip() for item in items if item.strip()]


def expand_hostlist(item: str) -> list[str]:
    """``gpu[001-003,7]`` -> gpu001, gpu002, gpu003, gpu7 (zero padding kept per range); several bracket
    groups multiply out in order (``r[1-2]-n[1-2]`` -> r1-n1, r1-n2, r2-n1, r2-n2), as Slurm expands."""
    match = _BRACKETS.search(item)
    if not match:
        return [item]
    head, rest = item[: match.start()], expand_hostlist(item[match.end() :])
    names = []
    for part in match.group(1).split(","):
        low, _, high = part.partition("-")
        if not low.isdigit() or (high and not high.isdigit()) or (high and int(high) < int(low)):
            raise UsageError(f"node list {item!r}: range {part!r} is not N or N-M with N <= M")
        width = len(low)
        for number in range(int(low), int(high or low) + 1):
            names += [f"{head}{number:0{width}d}{tail}" for tail in rest]
    return names


def expand_nodelist(text: str, where: str) -> list[str]:
    """A whole Slurm hostlist (``SLURM_JOB_NODELIST``), expanded as ``scontrol show hostnames`` does."""
    names = [name for item in split_hostlist(text) for name in expand_hostlist(item)]
    for name in names:
        if not NODE_NAME.match(name):
            raise InputError(f"{where}: {name!r} is not a node name")
    return check_unique(names, where)


def check_unique(names: Sequence[str], where: str) -> list[str]:
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise InputError(f"{where}: node {name!r} is listed twice; list each node once")
        seen.add(name)
    if len(seen) < 2:
        raise InputError(f"{where}: {len(seen)} node(s) listed; isolation needs at least 2")
    return list(names)
