"""The environment parity compares, and the test-only way to give one node a different one.

``fabric_env`` is what a node's fabric depends on: ``NCCL_*``, ``FI_*`` (libfabric), ``UCX_*``,
``TORCH_NCCL_*`` and the transport plumbing named in ``FABRIC_NAMES``, secrets redacted
(``redact.redact_env``). Variables that differ per node by design (``NCCL_HOSTID`` of a virtual node,
the per-host ``NCCL_DEBUG_FILE``) are left out, or every node would differ.

``GPUFABRIC_NODE_ENV`` (tests only, like ``GPUFABRIC_FAULT``): ``node=I:NAME=VALUE[,NAME=VALUE...]``
makes node I's probe see those variables, as a node whose image or profile sets them would. One
launcher-independent seam: the probe rank applies it to itself, whatever started it; the facts record it,
so a doctored node never passes for a clean one. Parsed strictly; a malformed value is one line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict

from gpufabric.boundary_names import NCCL_DEBUG_FILE_ENV, NODE_OVERRIDE_ENV
from gpufabric.errors import UsageError
from gpufabric.redact import redact_env

FABRIC_PREFIXES = ("NCCL_", "FI_", "UCX_", "TORCH_NCCL_", "OMPI_MCA_btl", "OMPI_MCA_pml", "OMPI_MCA_mtl")
FABRIC_NAMES = frozenset(
    {
        "LD_PRELOAD",
        "CUDA_DEVICE_MAX_CONNECTIONS",
        "GLOO_SOCKET_IFNAME",
        "RDMAV_FORK_SAFE",
        "MELLANOX_VISIBLE_DEVICES",
    }
)
PER_NODE_BY_DESIGN = frozenset({"NCCL_HOSTID", NCCL_DEBUG_FILE_ENV, "NCCL_TESTS_DEVICE"})
_GRAMMAR = re.compile(
    r"node=(?P<node>[0-9]+):(?P<pairs>[A-Za-z_][A-Za-z0-9_]*=[^,]*(?:,[A-Za-z_][A-Za-z0-9_]*=[^,]*)*)"
)


class NodeEnvOverride(BaseModel):
    """One parsed ``GPUFABRIC_NODE_ENV``: the node it applies to and the variables it sets there."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    node: int
    env: dict[str, str]

    @property
    def spec(self) -> str:
        return f"node={self.node}:" + ",".join(f"{k}={v}" for k, v in self.env.items())


def parse_node_env(text: str) -> NodeEnvOverride:
    """The strict grammar above; anything else is a ``UsageError`` naming the form."""
    match = _GRAMMAR.fullmatch(text)
    if match is None:
        raise UsageError(
            f"{NODE_OVERRIDE_ENV}: {text!r} is not an override; use node=I:NAME=VALUE[,NAME=VALUE] "
            "(e.g. node=2:NCCL_P2P_DISABLE=1), or unset it"
        )
    pairs = dict(pair.split("=", 1) for pair in match.group("pairs").split(","))
    return NodeEnvOverride(node=int(match.group("node")), env=pairs)


def node_env_from(environ: Mapping[str, str]) -> NodeEnvOverride | None:
    """None when unset or empty; else the parsed override."""
    text = environ.get(NODE_OVERRIDE_ENV)
    return parse_node_env(text) if text else None


def check_node_env(override: NodeEnvOverride | None, nodes: int) -> None:
    """An override aimed at a node that does not exist would silently do nothing: refuse it."""
    if override is not None and not 0 <= override.node < nodes:
        raise UsageError(
            f"{NODE_OVERRIDE_ENV}: {override.spec!r} names node {override.node}, but nodes are 0..{nodes - 1}"
        )


def is_fabric_name(name: str) -> bool:
    if name in PER_NODE_BY_DESIGN:
        return False
    return name.startswith(FABRIC_PREFIXES) or name in FABRIC_NAMES


def fabric_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The fabric-relevant variables of ``environ``, sorted, secrets redacted."""
    return redact_env({name: environ[name] for name in sorted(environ) if is_fabric_name(name)})
