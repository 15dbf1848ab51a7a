"""What a test bed calls its namespaces, interfaces and addresses, and how a sweep recognises them.

Every name starts with ``PREFIX`` and the run's id (6 hex digits), so two beds on one machine never meet
and a sweep touches nothing it did not make. Interface names stay within the kernel's IFNAMSIZ (15
characters: ``gft1a2b3cn63`` is 12); namespace names have no such limit but follow the same pattern.
Addresses come from a private /24 used only inside the bed's namespaces: node k is host k+1.
"""

from __future__ import annotations

import ipaddress
import re
import secrets
from dataclasses import dataclass

from gpufabric.errors import UsageError

PREFIX = "gft"
"""gpufabric test bed: the first three characters of everything a bed creates."""
RUN_ID_DIGITS = 6
IFNAMSIZ = 15
"""The kernel's longest interface name (IFNAMSIZ 16, less the terminating zero)."""
MAX_NODES = 64
DEFAULT_SUBNET = "10.213.0.0/24"
OUR_NAMESPACE = re.compile(rf"^{PREFIX}(?P<run>[0-9a-f]{{{RUN_ID_DIGITS}}})-(?:br|n[0-9]+)$")
"""A namespace of some bed: ``gft1a2b3c-br`` (the bridge) or ``gft1a2b3c-n0`` (node 0)."""
OUR_INTERFACE = re.compile(rf"^{PREFIX}[0-9a-f]{{{RUN_ID_DIGITS}}}(?:br|nic|n[0-9]+|p[0-9]+)$")


def new_run_id() -> str:
    return secrets.token_hex(RUN_ID_DIGITS // 2)


def check_subnet(subnet: str) -> ipaddress.IPv4Network:
    """``subnet`` as a network: private, IPv4, room for ``MAX_NODES`` hosts; else one line."""
    try:
        network = ipaddress.ip_network(subnet, strict=True)
    except ValueError as exc:
        raise UsageError(f"test bed subnet {subnet!r}: not a network ({exc}); e.g. {DEFAULT_SUBNET}") from exc
    if not isinstance(network, ipaddress.IPv4Network) or not network.is_private:
        raise UsageError(
            f"test bed subnet {subnet!r}: must be a private IPv4 range (the bed's namespaces use it and "
            f"nothing else); e.g. {DEFAULT_SUBNET}"
        )
    if network.num_addresses - 2 < MAX_NODES:
        raise UsageError(f"test bed subnet {subnet!r}: too small for {MAX_NODES} nodes; use a /24")
    return network


@dataclass(frozen=True)
class BedNames:
    """The names and addresses of one bed (``run_id``) on ``subnet``."""

    run_id: str
    subnet: str = DEFAULT_SUBNET

    @property
    def stem(self) -> str:
        return f"{PREFIX}{self.run_id}"

    @property
    def bridge_namespace(self) -> str:
        return f"{self.stem}-br"

    @property
    def bridge(self) -> str:
        return f"{self.stem}br"

    def namespace(self, node: int) -> str:
        return f"{self.stem}-n{node}"

    def interface(self, node: int) -> str:
        """Node ``node``'s NIC, inside its namespace (what ``GLOO_SOCKET_IFNAME`` names). One name on every
        node, as a real cluster's ``eth0``: each namespace has its own interfaces, and certify's parity
        check rightly flags nodes whose ``NCCL_SOCKET_IFNAME`` differ."""
        return f"{self.stem}nic"

    def port(self, node: int) -> str:
        """The veth peer of node ``node``'s NIC: a port of the bridge, in the bridge's namespace."""
        return f"{self.stem}p{node}"

    def address(self, node: int) -> str:
        return str(check_subnet(self.subnet).network_address + node + 1)

    @property
    def prefix_length(self) -> int:
        return check_subnet(self.subnet).prefixlen

    def namespaces(self, nodes: int) -> list[str]:
        """Every namespace of a bed of ``nodes`` nodes, the bridge's last."""
        return [self.namespace(k) for k in range(nodes)] + [self.bridge_namespace]


def run_of_namespace(name: str) -> str | None:
    """The run id of a bed's namespace; None for any other name (never ours to touch)."""
    matched = OUR_NAMESPACE.match(name)
    return matched.group("run") if matched else None
