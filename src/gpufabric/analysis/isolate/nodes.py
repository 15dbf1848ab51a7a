"""The node set to search, and the simulator's faults, from what users have at hand.

Sources: ``--nodes N`` (simulator: ``node0000`` ...), an OpenMPI hostfile (``launch.hosts``), or a node-list
file: one name per line, Slurm hostlist ranges (``gpu[001-004,010]``, what ``scontrol show hostnames`` would
print expanded) and ``kubectl get pods -o name`` output (``pod/`` prefix dropped). Faults name nodes by
index or by name; ``--bad-link A-B`` accepts names that themselves contain dashes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from gpufabric.analysis.isolate.simulator import ClusterModel, LinkDegradation
from gpufabric.errors import InputError, UsageError
from gpufabric.launch.hostlist import NODE_NAME, check_unique, expand_hostlist, split_hostlist
from gpufabric.launch.hosts import parse_hostfile
from gpufabric.textfile import read_text_file


def numbered_nodes(count: int) -> list[str]:
    if count < 2:
        raise UsageError(f"--nodes {count}: isolation needs at least 2 nodes; pass --nodes 2 or more")
    width = max(4, len(str(count - 1)))
    return [f"node{i:0{width}d}" for i in range(count)]


def read_node_list(path: Path) -> list[str]:
    text = read_text_file(path, "--node-list")
    names: list[str] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        for item in split_hostlist(",".join(raw.split("#", 1)[0].split())):
            for name in expand_hostlist(item.removeprefix("pod/")):
                if not NODE_NAME.match(name):
                    raise InputError(f"{path} line {number}: {name!r} is not a node name")
                names.append(name)
    return check_unique(names, str(path))


def read_hostfile(path: Path) -> list[str]:
    return [entry.host for entry in parse_hostfile(path)]


def resolve_node(token: str, names: Sequence[str], index: dict[str, int], flag: str) -> int:
    """A node given as its index (``17``) or its name (``gpu017``)."""
    token = token.strip()
    if token in index:
        return index[token]
    if token.isdigit() and len(token) < 20 and int(token) < len(names):  # int() refuses > 4300 digits
        return int(token)
    raise UsageError(
        f"{flag} {token[:40]!r}: no such node; "
        f"give an index 0..{len(names) - 1} or a name such as {names[0]!r}"
    )


def parse_link(text: str, names: Sequence[str], index: dict[str, int]) -> tuple[int, int]:
    """``A-B`` where A and B may contain dashes: the first split that names two known nodes wins."""
    for at in (m.start() for m in re.finditer("-", text)):
        left, right = text[:at], text[at + 1 :]
        try:
            a = resolve_node(left, names, index, "--bad-link")
            b = resolve_node(right, names, index, "--bad-link")
        except UsageError:
            continue
        if a == b:
            raise UsageError(f"--bad-link {text!r}: both ends are node {names[a]}; a link joins two nodes")
        return a, b
    raise UsageError(
        f"--bad-link {text!r}: expected A-B with two node indices (0..{len(names) - 1}) or names, e.g. 3-17"
    )


def build_simulation(
    names: Sequence[str],
    *,
    bad: Sequence[str] = (),
    bad_links: Sequence[str] = (),
    slow_factor: float = 0.5,
    link_factor: float = 0.5,
    noise: float = 0.03,
    seed: int = 0,
    nominal_gbps: float = 100.0,
) -> ClusterModel:
    """The simulated cluster for ``--simulate``; every bad flag is checked with a one-line error."""
    for flag, value in (("--slow-factor", slow_factor), ("--link-factor", link_factor)):
        if not 0 < value < 1:
            raise UsageError(f"{flag} {value}: a degraded part runs at a fraction in (0, 1), e.g. 0.5")
    if not 0 <= noise <= 0.5:
        raise UsageError(f"--noise {noise}: a relative noise in [0, 0.5], e.g. 0.03 for 3%")
    index = {name: i for i, name in enumerate(names)}
    slow = {resolve_node(t, names, index, "--bad"): slow_factor for item in bad for t in item.split(",") if t}
    links: list[LinkDegradation] = []
    for item in bad_links:
        for text in filter(None, (t.strip() for t in item.split(","))):
            a, b = parse_link(text, names, index)
            links.append(LinkDegradation(a=min(a, b), b=max(a, b), factor=link_factor))
    return ClusterModel(
        node_count=len(names),
        nominal_busbw_gbps=nominal_gbps,
        slow_nodes=slow,
        slow_links=links,
        noise=noise,
        seed=seed,
    )
