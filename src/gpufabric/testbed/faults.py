"""The faults a test bed can put on its nodes, by name, and the ``tc`` commands that make them.

    slow-nic      node K's NIC at a lower rate, both directions: ``tbf`` (or the default ``htb`` class)
                  on its veth for what it sends, ``tbf`` on the bridge-side peer for what it receives
    slow-path     the path between nodes J and K: an ``htb`` class on each end, chosen by a ``u32``
                  filter on the other end's address, at a lower rate; loss: on the bridge's port
                  towards each end, a classic-BPF ``cls_bpf`` filter sends that share of the other
                  end's packets, drawn at random, to a class whose ``pfifo`` holds none
                  (``testbed.loss``); delay adds a ``netem`` leaf (needs sch_netem in the kernel)
    dead-link     node K's NIC down (``ip link set ... down``)
    starved-node  node K's ranks pinned (``taskset``) to one core that a busy loop also occupies

Shaping is computed, not patched: ``egress_commands`` is a pure function from the bed's NIC rate and its
faults to each interface's qdiscs, so removing a fault is computing again without it. The bed applies
the result (``testbed.bed``); the CPU load of a starved node is ``testbed.load``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from gpufabric.testbed.names import BedNames

LINE_RATE_MBIT = 100_000.0
"""The default class of a node that has path classes but no NIC limit: far above what veths reach."""
BURST_FLOOR_BYTES = 32 * 1024
"""tbf/htb bucket: at least one GSO burst; above it, 5 ms of the rate (smooth at low rates)."""
QUEUE_LATENCY_MS = 200
"""tbf's queue: deep enough that TCP does not lose packets at every burst of a collective."""


class _Fault(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SlowNic(_Fault):
    kind: Literal["slow-nic"] = "slow-nic"
    node: int = Field(ge=0)
    rate_mbit: float = Field(gt=0, description="the NIC's rate both ways, megabits per second")

    @property
    def spec(self) -> str:
        return f"slow-nic:node={self.node}:rate_mbit={self.rate_mbit:g}"


class SlowPath(_Fault):
    kind: Literal["slow-path"] = "slow-path"
    nodes: tuple[int, int]
    rate_mbit: float | None = Field(default=None, gt=0, description="the path's rate both ways")
    delay_ms: float = Field(default=0.0, ge=0, description="one-way delay added on each end (netem)")
    loss_percent: float = Field(
        default=0.0, ge=0, le=100, description="packets dropped each way, drawn at random (cls_bpf)"
    )

    @model_validator(mode="after")
    def _two_nodes_and_an_effect(self) -> SlowPath:
        if self.nodes[0] == self.nodes[1] or min(self.nodes) < 0:
            raise ValueError(f"slow-path nodes {self.nodes}: two different nodes, e.g. (2, 5)")
        if self.rate_mbit is None and not self.delay_ms and not self.loss_percent:
            raise ValueError("slow-path: give a rate_mbit, a delay_ms or a loss_percent")
        return self

    @property
    def needs_netem(self) -> bool:
        return bool(self.delay_ms)

    @property
    def spec(self) -> str:
        parts = [f"slow-path:nodes={self.nodes[0]}-{self.nodes[1]}"]
        parts += [f"rate_mbit={self.rate_mbit:g}"] if self.rate_mbit is not None else []
        parts += [f"delay_ms={self.delay_ms:g}"] if self.delay_ms else []
        parts += [f"loss_percent={self.loss_percent:g}"] if self.loss_percent else []
        return ":".join(parts)


class DeadLink(_Fault):
    kind: Literal["dead-link"] = "dead-link"
    node: int = Field(ge=0)

    @property
    def spec(self) -> str:
        return f"dead-link:node={self.node}"


class StarvedNode(_Fault):
    kind: Literal["starved-node"] = "starved-node"
    node: int = Field(ge=0)
    core: int = Field(default=0, ge=0, description="the CPU core the node's ranks and the load share")

    @property
    def spec(self) -> str:
        return f"starved-node:node={self.node}:core={self.core}"


BedFault = Annotated[SlowNic | SlowPath | DeadLink | StarvedNode, Field(discriminator="kind")]


def fault_nodes(fault: BedFault) -> tuple[int, ...]:
    return fault.nodes if isinstance(fault, SlowPath) else (fault.node,)


def nic_rate(node: int, base_mbit: float | None, faults: Sequence[BedFault]) -> float | None:
    """Node ``node``'s NIC rate: the bed's, lowered by any slow-nic fault on it; None: not limited."""
    rates = [f.rate_mbit for f in faults if isinstance(f, SlowNic) and f.node == node]
    rates += [base_mbit] if base_mbit is not None else []
    return min(rates) if rates else None


def slowest_rate(nodes: int, base_mbit: float | None, faults: Sequence[BedFault]) -> float | None:
    """The lowest rate any node's NIC or any slow path is held to (what bounds a ring through all the
    nodes); None when nothing is shaped."""
    rates = [r for node in range(nodes) if (r := nic_rate(node, base_mbit, faults)) is not None]
    rates += [f.rate_mbit for f in faults if isinstance(f, SlowPath) and f.rate_mbit is not None]
    return min(rates) if rates else None


def _burst(rate_mbit: float) -> str:
    return f"{max(BURST_FLOOR_BYTES, int(rate_mbit * 1e6 / 8 * 0.005))}b"


def tbf(interface: str, rate_mbit: float) -> list[str]:
    return ["tc", "qdisc", "add", "dev", interface, "root", "tbf", "rate", f"{rate_mbit:g}mbit",
            "burst", _burst(rate_mbit), "latency", f"{QUEUE_LATENCY_MS}ms"]  # fmt: skip


def path_class(peer: int) -> str:
    """The htb class of the path towards ``peer`` (hex minor numbers; 1:1 is the NIC, 1:2 the default)."""
    return f"1:{peer + 16:x}"


def htb_root(interface: str, rate_mbit: float) -> list[list[str]]:
    """An ``htb`` root whose class 1:1 holds the whole NIC's rate; under it the default class 1:2, and
    the caller's classes (slow paths, drops), so they never add to what the NIC can send."""
    dev = ["dev", interface]
    return [
        ["tc", "qdisc", "add", *dev, "root", "handle", "1:", "htb", "default", "2"],
        ["tc", "class", "add", *dev, "parent", "1:", "classid", "1:1", "htb",
         "rate", f"{rate_mbit:g}mbit", "burst", _burst(rate_mbit), "cburst", _burst(rate_mbit)],
        ["tc", "class", "add", *dev, "parent", "1:1", "classid", "1:2", "htb",
         "rate", f"{rate_mbit:g}mbit", "burst", _burst(rate_mbit), "cburst", _burst(rate_mbit)],
    ]  # fmt: skip


def egress_commands(
    names: BedNames, node: int, base_mbit: float | None, faults: Sequence[BedFault]
) -> list[list[str]]:
    """The ``tc`` commands (run inside node ``node``'s namespace) that give its NIC its egress qdiscs;
    empty when nothing limits it. The caller removes the old root qdisc first."""
    interface = names.interface(node)
    rate = nic_rate(node, base_mbit, faults)
    paths = [f for f in faults if isinstance(f, SlowPath) and node in f.nodes]
    if not paths:
        return [tbf(interface, rate)] if rate is not None else []
    default_rate = rate if rate is not None else LINE_RATE_MBIT
    dev = ["dev", interface]
    commands = htb_root(interface, default_rate)
    for path in paths:
        peer = path.nodes[1] if path.nodes[0] == node else path.nodes[0]
        path_rate = min(x for x in (path.rate_mbit, rate, LINE_RATE_MBIT) if x is not None)
        classid = path_class(peer)
        commands.append(["tc", "class", "add", *dev, "parent", "1:1", "classid", classid, "htb",
                         "rate", f"{path_rate:g}mbit", "ceil", f"{path_rate:g}mbit",
                         "burst", _burst(path_rate), "cburst", _burst(path_rate)])  # fmt: skip
        commands.append(["tc", "filter", "add", *dev, "parent", "1:", "protocol", "ip", "prio", "1", "u32",
                         "match", "ip", "dst", f"{names.address(peer)}/32", "flowid", classid])  # fmt: skip
        if path.needs_netem:
            commands.append(["tc", "qdisc", "add", *dev, "parent", classid, "netem",
                             "delay", f"{path.delay_ms:g}ms"])  # fmt: skip
    return commands


def ingress_commands(
    names: BedNames, node: int, base_mbit: float | None, faults: Sequence[BedFault]
) -> list[list[str]]:
    """The ``tc`` commands (run in the bridge's namespace) that limit what node ``node`` receives, on the
    bridge's port towards it, whose egress is the node's ingress: a ``tbf`` at the NIC's rate; with a
    lossy path, an ``htb`` at that rate instead, and the path's drop (``testbed.loss``). Loss is made
    here, on the wire between the nodes, not in the sender's own qdisc: a packet its own qdisc drops is
    reported to the sending socket, which sends it again as if it were new (no retransmission, no loss
    as TCP knows it)."""
    from gpufabric.testbed.loss import loss_commands

    rate = nic_rate(node, base_mbit, faults)
    port = names.port(node)
    lossy = [f for f in faults if isinstance(f, SlowPath) and node in f.nodes and f.loss_percent]
    if not lossy:
        return [tbf(port, rate)] if rate is not None else []
    commands = htb_root(port, rate if rate is not None else LINE_RATE_MBIT)
    for path in lossy:
        peer = path.nodes[1] if path.nodes[0] == node else path.nodes[0]
        commands += loss_commands(port, names.address(peer), peer, path.loss_percent)
    return commands


def link_down(names: BedNames, node: int, faults: Sequence[BedFault]) -> bool:
    return any(isinstance(f, DeadLink) and f.node == node for f in faults)


def starving_core(node: int, faults: Sequence[BedFault]) -> int | None:
    """The core node ``node``'s ranks are pinned to, when it is starved."""
    return next((f.core for f in faults if isinstance(f, StarvedNode) and f.node == node), None)
