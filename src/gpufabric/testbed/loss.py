"""A lossy path without netem: a share of one node's packets to another dropped on the wire, at random.

Kernels without ``sch_netem`` (this machine's) cannot lose packets with a qdisc parameter, but they can
classify: on the bridge's port towards node K (the port's egress is K's ingress), a classic BPF program
in ``cls_bpf`` (``tc filter ... bpf bytecode``) matches IPv4 packets whose source is node J, draws a
random 32-bit number (the ancillary ``ld rand``) and sends the packet to a class whose leaf ``pfifo
limit 0`` holds nothing when the draw falls under the loss share; the rest fall through to the port's
default class. Neither end's TCP is told: the loss is on the wire, so the receiver sees a gap and the
sender retransmits, as on a bad link. Classic BPF needs no compiler and no BPF object file;
``act_gact``'s ``random`` drop and ``police`` would do the same in one line, and this kernel has neither.
"""

from __future__ import annotations

SKF_AD_RANDOM = 0xFFFFF000 + 56
"""Classic BPF's ancillary load of a random 32-bit number (``ld rand``: SKF_AD_OFF + SKF_AD_RANDOM)."""
IPV4_SOURCE_OFFSET = 14 + 12
"""The IPv4 source address, from the Ethernet header (where cls_bpf starts on a bridge port's egress)."""


def drop_class(peer: int) -> str:
    """The htb class whose ``pfifo limit 0`` drops the lost share of what ``peer`` sends."""
    return f"1:{peer + 0x100:x}"


def loss_bytecode(source: str, loss_percent: float, classid: str) -> str:
    """A classic BPF program for ``tc filter ... bpf bytecode``: an IPv4 packet from ``source`` goes to
    ``classid`` when a random draw falls under ``loss_percent``; anything else is not matched (0)."""
    address = int.from_bytes(bytes(int(part) for part in source.split(".")), "big")
    threshold = min(int(loss_percent / 100 * 2**32), 2**32 - 1)
    major, minor = (int(part, 16) for part in classid.split(":"))
    program = [
        (0x28, 0, 0, 12),  # ldh [12]: the EtherType
        (0x15, 0, 5, 0x0800),  # IPv4, else no match
        (0x20, 0, 0, IPV4_SOURCE_OFFSET),  # ld: the IPv4 source
        (0x15, 0, 3, address),  # from the peer, else no match
        (0x20, 0, 0, SKF_AD_RANDOM),  # ld rand
        (0x35, 1, 0, threshold),  # jge: at or over the threshold -> kept (no match)
        (0x06, 0, 0, major << 16 | minor),  # ret classid: the drop class
        (0x06, 0, 0, 0),  # ret 0: no match
    ]
    return ",".join([str(len(program)), *(f"{c} {jt} {jf} {k}" for c, jt, jf, k in program)])


def loss_commands(interface: str, peer_address: str, peer: int, loss_percent: float) -> list[list[str]]:
    """Under an ``htb`` root with class 1:1 (``faults.htb_root``): the drop class of ``peer``, its empty
    queue, and the filter that sends ``loss_percent`` of ``peer``'s packets there."""
    dev = ["dev", interface]
    drop = drop_class(peer)
    bytecode = loss_bytecode(peer_address, loss_percent, drop)
    return [
        ["tc", "class", "add", *dev, "parent", "1:1", "classid", drop, "htb", "rate", "1mbit"],
        ["tc", "qdisc", "add", *dev, "parent", drop, "pfifo", "limit", "0"],
        ["tc", "filter", "add", *dev, "parent", "1:", "protocol", "ip", "prio", "1", "bpf",
         "bytecode", bytecode, "classid", drop],
    ]  # fmt: skip
