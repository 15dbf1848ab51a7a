"""The shapes of NCCL_DEBUG=INFO lines, NCCL 2.4 through 2.28 and the network plugins around it.

Only regular expressions and small pure helpers live here; the streaming state machine that applies them
is ``nccl_logs/attest.py``. Each pattern names, in a comment, real lines it was written against (public
NCCL / aws-ofi-nccl / nccl-tests issue threads; the fixtures under tests/fixtures/nccl_logs quote them).

A line is located by its NCCL marker, never by its start, so any launcher prefix works: mpirun
``[1,0]<stdout>:``, SkyPilot ``(head, rank=0, pid=3808)``, kubectl/CloudWatch timestamps, ``[0]`` from
torchrun, or none at all.
"""

from __future__ import annotations

import re

from gpufabric.results.attestation import NetworkKind, TransportKind

# The marker, wherever it is: `... NCCL INFO msg`, `... misc/socket.cc:441 NCCL WARN msg`.
MARKER = re.compile(r"NCCL (?P<level>INFO|WARN|ERROR|ABORT|TRACE)\b ?")
# Before the marker, NCCL's own header `host:pid:tid [cudaDev]`, then on WARN lines a source location:
#   `dgxh100-4:460770:460770 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]`
#   `8h200-2:14630:14692 [0] process_err_completion:1723 NCCL WARN NET/OFI Operation ...`
# Launchers put their own text before it: `[1,26]<stdout>:ip-172-32-36-209:8716:9558 [2] NCCL INFO ...`.
_DEVICE_TOKEN = re.compile(r"^\[\d+\]$")
_SOURCE_LOCATION = re.compile(r"^[^:\s\[]+:\d+$")


def split_header(prefix: str) -> tuple[str, int] | None:
    """``'[1,0]<stdout>:ip-1:80:81 [0] '`` -> ("ip-1", 80); None when NCCL's header is absent."""
    tokens = prefix.split()
    if tokens and _SOURCE_LOCATION.match(tokens[-1]):
        tokens.pop()
    if len(tokens) < 2 or not _DEVICE_TOKEN.match(tokens[-1]):
        return None
    ident = tokens[-2].rsplit(":", 2)
    if len(ident) != 3 or not ident[1].isdigit() or not ident[2].isdigit() or len(ident[1]) > 12:
        return None
    head = ident[0]
    if "T" in head:  # a CloudWatch timestamp glued to the host: `...16:39:51.208-07:00ip-10-36-29-253`
        stamps = list(_TIMESTAMP.finditer(head))
        if stamps:
            head = head[stamps[-1].end() :]
    host = head.rsplit(":", 1)[-1]  # drop mpirun's `[1,0]<stdout>:` glued to the host
    return (host, int(ident[1])) if host else None


_TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?(?:Z|[+-]\d\d:\d\d)?")


# --- network plugin -----------------------------------------------------------------------------
# `NET/Plugin : Plugin load (libnccl-net.so) returned 2 : libnccl-net.so: cannot open shared object ...`
# `NET/Plugin: Plugin load returned 2 : ... : when loading libnccl-net.so`
PLUGIN_LOAD_FAILED = re.compile(
    r"^NET/Plugin ?: ?Plugin load (?:\((?P<lib>[^)]+)\) )?returned \d+ ?:? ?(?P<why>.*)"
)
# `NET/Plugin : No plugin found (libnccl-net.so), using internal implementation`
# `NET/Plugin: No plugin found (libnccl-net.so)` / `NET/Plugin: Could not find: libnccl-net.so`
# `NET/Plugin : dlerror=libnccl-net.so: cannot open ... No plugin found (libnccl-net.so), using internal ...`
PLUGIN_NOT_FOUND = re.compile(
    r"^NET/Plugin ?: ?(?:.{0,400}?No plugin found|Could not find:?)"
    r"(?: ?\(?(?P<lib>libnccl-net[\w.\-]{0,64}\.so)\)?)?"
)
# `NET/Plugin: Loaded net plugin NCCL RDMA Plugin v8 (v8)`, `NET/Plugin: Loaded net plugin FastSocket (v6)`
PLUGIN_LOADED = re.compile(r"^NET/Plugin ?: ?Loaded (?P<what>net|collnet|coll) plugin (?P<name>.+)$")
# the plugin interface version NCCL appends to a loaded plugin's name: `FastSocket (v6)`
PLUGIN_API_SUFFIX = re.compile(r" \(v\d+\)$")
# `Plugin Path : /opt/hpcx/nccl_rdma_sharp_plugin/lib/libnccl-net.so`
PLUGIN_PATH = re.compile(r"^Plugin Path ?: ?(?P<path>\S+)")
# The HPC-X plugin's own banner (Tencent's build of it too): `Plugin version : 1.4@Tencent Cloud`
PLUGIN_BANNER_VERSION = re.compile(r"^Plugin version ?: ?(?P<version>\S+(?: \S+){0,3})")
# aws-ofi-nccl announces itself: `NET/OFI Initializing aws-ofi-nccl 1.9.1-aws`,
# `NET/OFI Using aws-ofi-nccl 1.6.0`
OFI_PLUGIN = re.compile(r"^NET/OFI (?:Initializing|Using) (?P<name>aws-ofi-nccl[\w.\- ]*)$")
# `NET/OFI Selected Provider is efa (found 4 nics)`,
# `NET/OFI Selected provider is efa, fabric is efa (found 4 nics)`
OFI_PROVIDER = re.compile(
    r"^NET/OFI Selected [Pp]rovider is (?P<provider>[\w;\-]+)(?:.{0,200}?found (?P<nics>\d{1,12}) nics?)?"
)
# aws-ofi-nccl refusing to run (it then hands over to NCCL's own transports):
# `ofi_init:1288 NCCL WARN NET/OFI Only EFA provider is supported` (aws/aws-ofi-nccl#174),
# `NET/OFI aws-ofi-nccl initialization failed`, `NET/OFI Couldn't find any optimal provider` (#67)
OFI_REFUSED = re.compile(
    r"^NET/OFI (?:Only EFA provider is supported|aws-ofi-nccl initialization failed|"
    r"Couldn't find any optimal provider)"
)
# `Using network IB`, `Using network AWS Libfabric`, `Using network IBext_v8`;
# 2.28: `Assigned NET plugin IB to comm`
USING_NETWORK = re.compile(r"^(?:Using network (?P<a>.+)|Assigned NET plugin (?P<b>.+) to comm)$")
# 2.9-2.11: `Using internal Network Socket`; plugin era: `P2P plugin IBext`
USING_NETWORK_OLD = re.compile(r"^(?:Using internal [Nn]etwork (?P<a>\S+)|P2P plugin (?P<b>\S+))\s*$")
# `NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [RO]; OOB ib0:192.168.11.1<0>`
# `NET/Socket : Using [0]eth0:10.0.0.1<0> [1]eth1:10.0.1.1<0>`; FastSocket / TCPX print the same shape.
NET_USING = re.compile(
    r"^NET/(?P<net>[\w ]+?) ?: ?Using (?P<devs>(?:\[\d+\]\S+ ?)+)(?:\[RO\])?;? ?(?:OOB (?P<oob>\S+))?"
)
NET_DEVICE = re.compile(r"\[(?P<idx>\d{1,12})\](?P<dev>[^\s\[;]+)")
# NCCL 2.21+ merges ports of one NIC: `NET/IB : Using [0]={[0] mlx5_2:1/RoCE, [1] mlx5_3:1/RoCE} [1]={...}`
NET_MERGED_DEVICE = re.compile(r"\[\d+\]=\{(?P<inner>[^}]{0,512})\}")
# `Bootstrap : Using eth0:10.0.0.1<0>`, `Bootstrap : Using [0]lo:127.0.0.1<0>`
BOOTSTRAP = re.compile(r"^Bootstrap ?: ?Using (?:\[\d+\])?(?P<iface>[^\s:]+)(?::(?P<addr>[^<\s]{1,64}))?")
# `NET/GPUDirectTCPX ver. 3.1.8.` and `NET/GPUDirectTCPX : GPUDirectTCPX enable: 1` (seed 003)
TCPX_ENABLE = re.compile(r"^NET/GPUDirectTCPX ?: ?GPUDirectTCPX enable: ?(?P<on>\d)")
# TCPXO before TCPX: `GPUDirectTCPX` is a prefix of `GPUDirectTCPXO`
PLUGIN_VERSION = re.compile(r"^NET/(?P<net>GPUDirectTCPXO|GPUDirectTCPX|FasTrak|gIB) ver\. ?(?P<ver>[\d.]+)")
# GPUDirect-TCPXO's plugin on A3 Mega: `Initializing network FasTrak, version: 1.0.17` (after `Using network
# FasTrak`); NCCL's own plugins say `Initialized NET plugin Socket` instead
PLUGIN_INITIALIZING = re.compile(r"^Initializing network (?P<net>\w+),? version:? ?(?P<ver>[\d.]+)")

# --- what proves a network, as a plan prints it -------------------------------------------------------
# NCCL's names of a network in the lines below, by the catalog's spelling (``Fabric.nccl_net``):
# aws-ofi-nccl says `AWS Libfabric` (older) or `Libfabric`; IB is NCCL's own `IB` or the HPC-X plugin's
# `IBext_v8`. `\b` keeps `GPUDirectTCPX` from matching `GPUDirectTCPXO`.
_NET_NAMES = {"Libfabric": r"(?:AWS )?Libfabric", "IB": r"IB(?:ext\w*)?"}


def network_proof(nccl_net: str | None) -> list[str]:
    """The lines that prove NCCL used the network it calls ``nccl_net`` between nodes, as the regexes a
    plan prints for grep (``Plan.log_proof``). Each is a line this module reads as that network: NCCL
    choosing it (USING_NETWORK, USING_NETWORK_OLD), a channel over it (CHANNEL_LINK's ``via NET/<name>/``)
    and TCPX's ``enable: 1`` (TCPX_ENABLE); tests/nccl_logs/test_network_proof.py holds both readings to
    every real log. None (a fabric inside a node: no NCCL network) has none."""
    if nccl_net is None:
        return []
    name = _NET_NAMES.get(nccl_net, re.escape(nccl_net))
    proof = [
        rf"(?:Using network|Assigned NET plugin|Using internal [Nn]etwork) {name}\b",
        rf"via NET/{name}/\d+",
    ]
    if nccl_net == "GPUDirectTCPX":
        proof.append("GPUDirectTCPX enable: ?1")
    return proof


# --- GDR ----------------------------------------------------------------------------------------
# `NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'` / `... Enabled for HCA 0 'mlx5_0' (no dmabuf)`
GDR_HCA = re.compile(
    r"^NET/(?P<net>[\w ]+?) ?: ?GPU Direct RDMA (?P<state>Enabled|Disabled) for HCA \d+ '(?P<dev>[^']+)'"
)
# Per GPU-NIC pair, by PCI distance against NCCL_NET_GDR_LEVEL (2.12+; older ones under `NET/IB : `):
# `GPU Direct RDMA Disabled for GPU 2 / HCA 2 (distance 7 > 4)`,
# `GPU Direct RDMA Enabled for GPU 81000 / HCA 1 (distance 6 <= 7), read 0`
GDR_GPU = re.compile(
    r"^(?:NET/[\w ]+? ?: ?)?GPU Direct RDMA (?P<state>Enabled|Disabled) for GPU (?P<gpu>[\w\[\]]+) / "
    r"HCA (?P<hca>\w+) \(distance (?P<distance>\d+ [<>]=? ?\d+)\)"
)

# --- channels and topology ----------------------------------------------------------------------
# `Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read`, `Channel 03/0 : 15[7] -> 6[6] [send] via NET/Socket/3`
# `via P2P/direct pointer`, `via NET/AWS Libfabric/1/GDRDMA` (spaces belong to the transport);
# 2.7: `Channel 00 : 0[1b000] -> 1[1c000] via P2P/IPC`; 2.4: `Ring 00 : 7 -> 8 [send] via NET/AWS Libfabric/0`
CHANNEL_LINK = re.compile(
    r"^(?:Channel|Ring) (?P<ch>\d{1,12})(?:/\d+)? ?: ?(?P<rank>\d{1,12})(?:\[[0-9a-fA-F]+\])? -> "
    r"(?P<peer>\d{1,12})(?:\[[0-9a-fA-F]+\])?(?: \[(?P<dir>send|receive)\])? via (?P<transport>.+)$"
)
# `Channel 00/02 :    0   1` (ring order) and `Ring 00 : 1 -> 0 -> 1`
# (every repeat needs its whitespace, so a run of digits splits one way only: linear, never exponential)
RING = re.compile(
    r"^(?:Channel (?P<a>\d{1,12})/\d+ ?:(?:\s+\d+)+$|Ring (?P<b>\d{1,12}) ?: ?\d+ -> \d+ -> \d+$)"
)
# `Trees [0] 1/-1/-1->0->-1 [1] -1/-1/-1->0->1`, `Tree 0 : -1 -> 0 -> 1/-1/-1`
TREES = re.compile(r"\[(?P<ch>\d{1,12})\] ?-?\d+/")
TREE = re.compile(r"^Tree (?P<ch>\d{1,12}) ?: ")
# 2.17+: `32 coll channels, 32 collnet channels, 16 nvls channels, 32 p2p channels, 32 p2p channels per peer`
# 2.9-2.16: `8 coll channels, 8 p2p channels, 2 p2p channels per peer`
CHANNEL_COUNTS = re.compile(
    r"^(?P<coll>\d{1,12}) coll channels,(?: (?P<collnet>\d{1,12}) collnet channels,)?"
    r"(?: (?P<nvls>\d{1,12}) nvls channels,)?"
    r" (?P<p2p>\d{1,12}) p2p channels"
)
# `comm 0x55cc8aa86c70 rank 0 nranks 16 cudaDev 0 nvmlDev 0 busId 1c000 commId 0x65e0... - Init START`
COMM_INIT = re.compile(
    r"comm 0x[0-9a-f]+ rank (?P<rank>\d{1,12}) nranks (?P<nranks>\d{1,12}) cudaDev (?P<dev>\d{1,12})"
    r"(?: nvmlDev (?P<nvml>\d+))?(?: busId (?P<bus>[0-9a-fA-F]+))?"
)
# Which communicator a rank's Init line belongs to, read from the raw bytes to tell runs apart before
# attesting them. Every rank of a communicator logs the same commId (2.13+); 2.8-2.12 print none:
# `comm 0x557fe785f7a0 rank 36 nranks 64 cudaDev 4 nvmlDev 4 busId 9b000 commId 0x5ae77eb5ea4ec1ee - Init ..`
# `comm 0x7fdf08000d00 rank 15 nranks 16 cudaDev 7 busId e7000 - Init COMPLETE`
COMM_MEMBER = re.compile(
    rb"comm 0x[0-9a-fA-F]+ rank (?P<rank>\d{1,12}) nranks (?P<nranks>\d{1,12})"
    rb"(?:[^\r\n]{0,256}? comm(?:Id|Hash) (?P<id>0x[0-9a-fA-F]+))?"
)
# `comm 0x8ec0ac0 rank 6 nRanks 16 nNodes 2 localRanks 8 localRank 6 MNNVL 0`
COMM_NODES = re.compile(
    r"comm 0x[0-9a-f]+ rank (?P<rank>\d{1,12}) nRanks (?P<nranks>\d{1,12}) nNodes (?P<nnodes>\d{1,12})"
)
# `NVLS multicast support is available on dev 0` / `... is not available on dev 5`
NVLS_SUPPORT = re.compile(r"^NVLS multicast support is (?P<not>not )?available")
# `Connected NVLS`, `Connected all NVLS`, `NVLS comm 0x... headRank ...`
NVLS_USED = re.compile(r"^(?:Connected (?:all )?NVLS|NVLS comm )")
COLLNET_USED = re.compile(r"^(?:Connected (?:all )?[Cc]oll[Nn]et|CollNet \d+/\d+ :|Coll[Nn]et channel)")
# `NCCL_SOCKET_IFNAME set by environment to en,eth,em,bond`, `NCCL_IB_DISABLE set by environment to 0.`
ENV_SET = re.compile(r"^(?P<name>NCCL_[A-Z0-9_]+) set by environment to (?P<value>.*)$")

# Any line the attestation counts as NCCL output (a marker, a version, a failed call), on raw bytes: tells
# a log from an unrelated text file without attesting it.
NCCL_LINE_BYTES = re.compile(
    rb"NCCL (?:INFO|WARN|ERROR|ABORT|TRACE)\b|NCCL version \d|NCCL (?:error|failure)\b"
)

# torch: `NCCL error in: ...ProcessGroupNCCL.cpp:1269, unhandled system error, NCCL version 2.14.3`
# nccl-tests: `Test NCCL failure common.cu:1005 'unhandled system error (run with NCCL_DEBUG=INFO ...)'`
FAILURE = re.compile(r"NCCL (?:error|failure)\b")

# Error wording NCCL uses when a call fails (WARN lines are warnings unless they carry one of these).
ERROR_WORDS = re.compile(
    r"unhandled (?:system|cuda) error|internal error|invalid usage|remote process exited|"
    r"Error: network \S+ not found|Could not find any optimal provider|failed|"
    r"No space left on device|Connection (?:closed|refused|reset)|timed? ?out|\berror\b",
    re.IGNORECASE,
)

# First match wins, so a name that contains another's needle comes first: TCPXO (`GPUDirectTCPXO`, its
# FasTrak plugin) before TCPX. `NCCL RDMA Plugin vN` is the banner of the HPC-X / Mellanox RDMA plugin
# (`Loaded net plugin NCCL RDMA Plugin v8`), whose network is IBext: InfiniBand or RoCE verbs.
_NETWORK_KINDS: tuple[tuple[str, NetworkKind], ...] = (
    ("fastsocket", "other"),
    ("tcpxo", "tcpxo"),
    ("fastrak", "tcpxo"),
    ("gpudirecttcpx", "tcpx"),
    ("gib", "gib"),
    ("ncclrdmaplugin", "ib"),
    ("libfabric", "ofi"),
    ("ofi", "ofi"),
    ("ib", "ib"),
    ("socket", "socket"),
)


# Networks that only a net plugin provides (its `NET/<name> :` lines are the plugin's own words).
# FastSocket is Google's TCP plugin: named as itself, never read as NCCL's own Socket transport.
_PLUGIN_NETWORKS = ("GPUDirectTCPXO", "GPUDirectTCPX", "FasTrak", "FastSocket", "gIB")


def is_plugin_network(net: str) -> bool:
    return net.startswith(_PLUGIN_NETWORKS)


def plugin_network_prefix(msg: str) -> str | None:
    """``NET/FastSocket : Flow placement enabled.`` -> "FastSocket"; None for NCCL's own networks."""
    if not msg.startswith("NET/"):
        return None
    name = msg[4:].split(" ", 1)[0].split(":", 1)[0]
    return name if is_plugin_network(name) else None


# A plugin's own source file in a WARN line's header, e.g. GPUDirect-TCPX's
# `[0] tcpxResult_t tcpxCommProgress(tcpxComm*):1231 NCCL WARN ... rx ctrl timeout` (NVIDIA/nccl#1652),
# FastSocket's `net_fastsocket.cc:765 NCCL WARN`, the HPC-X plugin's `ib_plugin.c:1007 NCCL WARN`.
_PLUGIN_SOURCES: tuple[tuple[str, str], ...] = (
    ("tcpxo", "GPUDirectTCPXO"),
    ("fastrak", "FasTrak"),
    ("tcpx", "GPUDirectTCPX"),
    ("fastsocket", "FastSocket"),
    ("ib_plugin.c", "IBext"),
    ("sharp_plugin.c", "SHARP"),
    ("gib", "gIB"),
)


PEER_ADDRESSES = re.compile(
    r"(?P<local>\d{1,3}(?:\.\d{1,3}){3})<\d{1,5}>(?:<-|->)(?P<remote>\d{1,3}(?:\.\d{1,3}){3})<"
)


def plugin_origin(prefix: str) -> str | None:
    """The plugin whose source logged a line, from the text before NCCL's marker; None for NCCL's own."""
    # Only the source location, the last token before the marker: never the host name before it.
    tokens = prefix[-200:].rsplit(None, 1)
    source = tokens[-1].lower() if tokens else ""
    if ":" not in source:
        return None
    return next((name for needle, name in _PLUGIN_SOURCES if needle in source), None)


def network_kind(name: str) -> NetworkKind:
    """``IBext_v8`` -> ib, ``AWS Libfabric`` -> ofi, ``GPUDirectTCPX`` -> tcpx, ``FastSocket`` -> socket."""
    lowered = name.strip().lower()
    for needle, kind in _NETWORK_KINDS:
        if lowered.startswith(needle) or needle in lowered.replace(" ", ""):
            return kind
    return "other"


# Every transport spelling NCCL 2.3-2.28 prints after `via` (git grep of each release tag's src/):
#   P2P: `P2P/direct pointer[/read]`, `P2P/IPC[/read]`, `P2P/CUMEM[/read]`, `P2P/indirect/<n>[<bus>]`,
#        `P2P/common device` (two ranks on one GPU);
#   SHM: `direct shared memory` (2.3-2.8, NVIDIA/nccl#622), `SHM/direct`, `SHM/<send>/<recv>` (2.9+);
#   NET: `NET/<network>/<dev>[(<proxy rank>)][/GDRDMA][/Shared]`; CollNet: `COLLNET/<network>/<dev>`.
_SHARED_MEMORY = re.compile(r"^(?:direct )?shared memory\b", re.IGNORECASE)


def transport_kind(transport: str) -> TransportKind:
    """``P2P/CUMEM/read`` -> p2p, ``SHM/direct/direct`` and ``direct shared memory`` -> shm,
    ``NET/IB/0/GDRDMA`` -> net, ``COLLNET/IB/0`` -> collnet."""
    head = transport.split("/", 1)[0].upper()
    if head == "P2P":
        return "p2p"
    if head == "SHM" or _SHARED_MEMORY.match(transport):
        return "shm"
    if head == "NET":
        return "net"
    if head.startswith("COLLNET"):
        return "collnet"
    if head.startswith("NVLS"):
        return "nvls"
    return "other"


# The device part of a NET transport: `0`, or with PXN `0(8)` (device 0 of the proxy rank 8's NIC).
_NET_DEVICE_PART = re.compile(r"^(?P<dev>\d{1,12})(?:\(\d+\))?$")


def net_parts(transport: str) -> tuple[str | None, int | None, bool]:
    """``NET/IB/1/GDRDMA`` -> ("IB", 1, True); ``NET/AWS Libfabric/0`` -> ("AWS Libfabric", 0, False);
    PXN ``NET/IB/0(8)/GDRDMA`` -> ("IB", 0, True)."""
    parts = transport.split("/")
    if len(parts) < 2 or parts[0].upper() != "NET":
        return None, None, False
    device_part = _NET_DEVICE_PART.match(parts[2]) if len(parts) > 2 else None
    device = int(device_part.group("dev")) if device_part else None
    return parts[1], device, any(p.upper() == "GDRDMA" for p in parts[2:])
