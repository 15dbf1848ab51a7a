"""What one NCCL log line does to an attestation, computed once per distinct line (``Template``).

A long NCCL log repeats itself: the same channel, proxy and topology lines for every communicator and
every rank. So the parser (``attest.py``) never interprets a line twice: it turns each distinct message
into a ``Template`` (pure data: what to record, what to count, what to overwrite) and then only counts how
often each template occurs. The rules are those of the line shapes in ``patterns.py``.

A template's effects come in four kinds, because they combine differently when a line repeats:

- ``ops``: idempotent records (first-seen order matters, repeats change nothing: a host, a rank, a
  distinct warning, a max); applied once, when the line is first seen;
- ``counts``: additive tallies, multiplied by the number of occurrences at the end;
- ``slots``: last-wins assignments (``NCCL_X set by environment to Y``, the OFI provider, the loaded
  plugin): their order against each other matters, so the parser checks it;
- ``link``: a channel link record, appended in log order while the attestation keeps the first few.

``HOST`` and ``PID`` in an op stand for the logging rank's header, filled in when the op is applied, so
the messages of different ranks share templates.
"""

from __future__ import annotations

import re
from typing import Any, Final

from gpufabric.nccl_logs import patterns as pat
from gpufabric.results.device_line import parse_device_line
from gpufabric.results.nccl_version import nccl_version


class _Placeholder:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


HOST: Final = _Placeholder("HOST")
PID: Final = _Placeholder("PID")

Op = tuple[str, tuple[Any, ...]]
Count = tuple[str, str | None, int]  # (tally, key or None for a scalar, weight)
Slot = tuple[tuple[str, str], str]  # ((field, key), value)


class Template:
    """The effect of one distinct message; ``hits`` counts its occurrences until they are tallied.

    ``ops`` are split by whether they name the logging rank: ``shared`` ones are the same for every line
    of this template (applied once per template), ``per_line`` ones (HOST, PID) once per distinct header.
    Every ``<header> NCCL <level> <msg>`` line also records its host (``header`` is True); the parser does
    that itself, it is the one record nearly every line has.
    """

    __slots__ = ("applied", "counts", "header", "hits", "link", "ordered", "per_line", "shared", "slots")

    def __init__(self) -> None:
        self.shared: list[Op] = []
        self.per_line: list[Op] = []
        self.counts: list[Count] = []
        self.slots: list[Slot] = []
        self.link: dict[str, Any] | None = None
        self.ordered = False  # log order matters beyond the first occurrence: slots or a link
        self.header = False  # a <header> NCCL <level> line: its host is recorded
        self.hits = 0
        self.applied = False  # the shared ops ran

    def op(self, name: str, *args: Any) -> None:
        """A record that is the same for every line of the template."""
        self.shared.append((name, args))

    def line_op(self, name: str, *args: Any) -> None:
        """A record that names the logging rank (HOST, PID in ``args``)."""
        self.per_line.append((name, args))

    def count(self, tally: str, key: str | None = None, weight: int = 1) -> None:
        self.counts.append((tally, key, weight))

    def slot(self, field: str, key: str, value: str) -> None:
        self.slots.append(((field, key), value))
        self.ordered = True

    def set_link(self, link: dict[str, Any]) -> None:
        self.link = link
        self.ordered = True


EMPTY: Final = Template()  # a line that is not NCCL output: only counted as read


def line_template(line: str, marker: re.Match[str] | None) -> Template:
    """The template of a whole line that is not ``<header> NCCL <level> <msg>`` (or is a version line);
    ``marker`` is ``patterns.MARKER.search(line)``, which the caller needs too."""
    if "NCCL" not in line:
        if "Rank" in line and "#" in line:
            return _tests_rank(line)
        return EMPTY
    version = nccl_version(line) if "NCCL version" in line else None
    tpl = Template()
    if version:
        tpl.op("version", version)
    if marker:
        tpl.count("nccl_lines")
        return tpl
    # nccl-tests' bare version line, or torch / nccl-tests reporting a failed NCCL call
    failure = pat.FAILURE.search(line)
    if version or failure:
        tpl.count("nccl_lines")
    if failure:
        _problem(tpl, line.strip(), "ERROR")
    return tpl


def message_template(level: str, msg: str, origin: str | None = None) -> Template:
    """The template of ``<header> NCCL <level> <msg>``; the header's host and pid are HOST and PID.
    ``origin`` names the net plugin whose source file logged the line (``pat.plugin_origin``)."""
    tpl = Template()
    tpl.count("nccl_lines")
    tpl.header = True
    if origin:
        _plugin_own(tpl, origin, msg)
    if level in ("WARN", "ERROR", "ABORT"):
        _problem(tpl, msg, level)
        if pat.OFI_REFUSED.match(msg):
            tpl.op("plugin_refused", "aws-ofi-nccl", msg)
            _proof(tpl, "plugin_refused", msg)
        elif msg.startswith("NET/OFI"):
            _proof(tpl, "plugin_own", msg)
    else:
        _info(tpl, msg)
    return tpl


def _proof(tpl: Template, fact: str, msg: str) -> None:
    """Keep this line as evidence of ``fact`` (the first few per fact, with the logging host)."""
    tpl.line_op("proof", fact, HOST, msg)


def _plugin_own(tpl: Template, origin: str, msg: str) -> None:
    """A line logged from a plugin's own source file (``tcpxCommProgress``, ``net_fastsocket.cc``): the
    plugin is running, named as it names itself, never mapped onto a built-in transport."""
    tpl.op("plugin_own", origin)
    _proof(tpl, "collnet_plugin" if origin == "SHARP" else "plugin_own", msg)
    # `172.16.0.11<39187><-172.16.0.95<46723>`: the plugin talks to a peer at another address
    if (peer := pat.PEER_ADDRESSES.search(msg)) and peer.group("local") != peer.group("remote"):
        _proof(tpl, "remote_peer", msg)
    if pat.network_kind(origin) in ("tcpx", "tcpxo", "gib") or origin == "FastSocket":
        tpl.op("touch", "networks", origin)


def _tests_rank(line: str) -> Template:
    tpl = Template()
    if (dev := parse_device_line(line, behind_prefix=True)) is not None:
        tpl.op("proof", "tests_ranks", None, line.strip())
        tpl.op("tests_rank", dev.host, dev.rank, dev.pid, dev.index, dev.bus_id, dev.name)
    return tpl


def _problem(tpl: Template, msg: str, level: str) -> None:
    is_error = level in ("ERROR", "ABORT") or bool(pat.ERROR_WORDS.search(msg))
    if level == "WARN":
        tpl.count("warning_count")
        tpl.op("warning", msg)
    if is_error:
        tpl.count("error_count")
        tpl.op("error", msg)


def _info(tpl: Template, msg: str) -> None:
    if msg.startswith(("Channel ", "Ring ", "CollNet ")):
        link = pat.CHANNEL_LINK.match(msg)
        if link:
            _link(tpl, link.groupdict())
            _proof(tpl, f"link:{pat.transport_kind(str(link.group('transport')))}", msg)
            return
        if msg.startswith("CollNet ") and pat.COLLNET_USED.match(msg):
            tpl.op("collnet")
            _proof(tpl, "link:collnet", msg)
            return
        ring = pat.RING.match(msg)
        if ring:
            tpl.op("ring", int(ring.group("a") or ring.group("b")))
        return
    if msg.startswith("Tree"):
        single = pat.TREE.match(msg)
        if single:
            tpl.op("trees", (int(single.group("ch")),))
        elif msg.startswith("Trees"):
            tpl.op("trees", tuple(int(m.group("ch")) for m in pat.TREES.finditer(msg)))
        return
    if msg.startswith("comm ") or " comm 0x" in msg:
        if init := pat.COMM_INIT.search(msg):
            rank, nranks, dev = (int(init.group(g)) for g in ("rank", "nranks", "dev"))
            tpl.line_op("comm_rank", rank, nranks, HOST, PID, dev, init.group("bus"))
            _proof(tpl, "ranks", msg)
        elif nodes := pat.COMM_NODES.search(msg):
            tpl.op("nodes", int(nodes.group("nnodes")), int(nodes.group("nranks")))
            _proof(tpl, "nodes", msg)
        return
    if "NET/" in msg or msg.startswith(
        ("Plugin Path", "Plugin version", "Using ", "Assigned NET", "P2P plugin", "Initializing network")
    ):
        _network(tpl, msg)
        return
    if msg.startswith("Bootstrap"):
        if boot := pat.BOOTSTRAP.match(msg):
            tpl.line_op("bootstrap", boot.group("iface"), HOST, boot.group("addr"))
        return
    if "coll channels" in msg:
        if counts := pat.CHANNEL_COUNTS.match(msg):
            tpl.op("channel_counts", *counts.group("coll", "collnet", "nvls", "p2p"))
        return
    if "set by environment" in msg:
        if env := pat.ENV_SET.match(msg):
            value = env.group("value").rstrip()
            value = value[:-1] if value.endswith(".") else value
            tpl.slot("env", env.group("name"), value)
            if env.group("name") == "NCCL_HOSTID":  # a virtual node: NCCL treats these ranks as a host
                tpl.line_op("hostid", HOST, PID, value)
                _proof(tpl, "hostid", msg)
        return
    if "NVLS" in msg:
        if support := pat.NVLS_SUPPORT.match(msg):
            tpl.op("nvls_available", not support.group("not"))
        elif pat.NVLS_USED.match(msg):
            tpl.op("nvls")
            _proof(tpl, "link:nvls", msg)
        return
    if pat.COLLNET_USED.match(msg):
        tpl.op("collnet")
        _proof(tpl, "link:collnet", msg)
        return
    if msg.startswith("GPU Direct RDMA"):
        _gdr_pair(tpl, msg)
        return
    _error_words(tpl, msg)


def _gdr_pair(tpl: Template, msg: str) -> bool:
    """NCCL's per GPU-NIC GDR decision; a disabled pair is listed like a disabled HCA."""
    match = pat.GDR_GPU.match(msg)
    if match:
        key = f"GPU {match.group('gpu')} / HCA {match.group('hca')} (distance {match.group('distance')})"
        tpl.op("gdr", match.group("state") == "Enabled", key)
    return match is not None


def _error_words(tpl: Template, msg: str) -> None:
    # Both must hold; the substring test is the cheap one and rejects nearly every message.
    if "error" in msg.lower() and pat.ERROR_WORDS.search(msg):
        _problem(tpl, msg, "INFO")


def _link(tpl: Template, link: dict[str, str | None]) -> None:
    transport = str(link["transport"]).strip()
    kind = pat.transport_kind(transport)
    rank, peer = int(str(link["rank"])), int(str(link["peer"]))
    net, device, gdr = pat.net_parts(transport)
    tpl.count("channel_links_total")
    tpl.count("transports", transport)
    tpl.count("kinds", kind)
    tpl.op("touch", "transports", transport)
    tpl.op("touch", "kinds", kind)
    if kind == "net":
        tpl.count("net_links")
        tpl.count("gdr_links", weight=int(gdr))
        if net:
            tpl.op("touch", "networks", net)  # known, even when no "Using network" line was printed
        if device is not None:
            tpl.line_op("device", HOST, device)
        # A [receive] line is logged by its second rank: the remote end is then the first.
        remote = rank if link["dir"] == "receive" else peer
        tpl.line_op("pair", HOST, rank + peer - remote, remote, PID)
        # The logging rank's host, from the line itself: a log without Init lines (one process driving
        # several GPUs, NVIDIA/nccl#707) still shows which ranks share a host.
        tpl.line_op("link_rank", HOST, PID, rank + peer - remote)
    direction = link["dir"]
    tpl.set_link({
        "rank": rank,
        "peer": peer,
        "channel": int(str(link["ch"])),
        "transport": transport,
        "kind": kind,
        "direction": "send" if direction == "send" else "receive" if direction else None,
        "net_device": device,
        "gdr": gdr if kind == "net" else None,
    })  # fmt: skip


def _network(tpl: Template, msg: str) -> None:
    if msg.startswith("NET/Plugin") or "NET/Plugin" in msg[:12]:
        _plugin(tpl, msg[msg.find("NET/Plugin") :])
    elif match := pat.USING_NETWORK.match(msg):
        name = (match.group("a") or match.group("b")).strip()
        tpl.op("touch", "networks", name)
        tpl.count("networks", name)
        _proof(tpl, "network", msg)
    elif match := pat.USING_NETWORK_OLD.match(msg):
        name = (match.group("a") or match.group("b")).strip()
        tpl.op("touch", "networks", name)
        tpl.count("networks", name)
        _proof(tpl, "network", msg)
        if match.group("b"):  # `P2P plugin IBext`: printed by the HPC-X / Mellanox plugin itself
            tpl.op("plugin_or", name)
            _proof(tpl, "plugin_loaded", msg)
    elif match := pat.PLUGIN_PATH.match(msg):
        tpl.slot("net_plugin_path", "", match.group("path"))
        tpl.op("plugin_path_seen")
        _proof(tpl, "plugin_loaded", msg)
    elif match := pat.PLUGIN_BANNER_VERSION.match(msg):
        tpl.op("plugin_path_seen")
        tpl.op("plugin_version", match.group("version"))
        _proof(tpl, "plugin_loaded", msg)
    elif match := pat.OFI_PROVIDER.match(msg):
        tpl.slot("ofi_provider", "", match.group("provider"))
        _proof(tpl, "provider", msg)
        if match.group("nics"):
            tpl.op("device_count", int(match.group("nics")))
    elif match := pat.OFI_PLUGIN.match(msg):
        name = match.group("name").strip()
        tpl.slot("net_plugin", "", "aws-ofi-nccl")
        tpl.op("plugin_version", name.removeprefix("aws-ofi-nccl").strip() or None)
        _proof(tpl, "plugin_loaded", msg)
    elif msg.startswith("NET/OFI"):  # only aws-ofi-nccl prints these
        tpl.op("plugin_own", "aws-ofi-nccl")
        _proof(tpl, "plugin_own", msg)
    elif merged := list(pat.NET_MERGED_DEVICE.finditer(msg)) if "]={" in msg else None:
        # `NET/IB : Using [0]={[0] mlx5_2:1/RoCE, [1] mlx5_3:1/RoCE} [1]={...}`: NICs merged into one
        for group in merged:
            tpl.op("net_device", "+".join(d.strip() for d in group.group("inner").split(",")))
        tpl.op("device_count", len(merged))
        tpl.op("touch", "networks", msg[4 : msg.find(" ")] if msg.startswith("NET/") else "IB")
        _proof(tpl, "nics", msg)
    elif match := pat.GDR_HCA.match(msg):
        key = f"{match.group('net').strip()}:{match.group('dev')}"
        tpl.op("gdr", match.group("state") == "Enabled", key)
    elif match := pat.NET_USING.match(msg):
        _net_using(tpl, match.group("net").strip(), match.group("devs"), match.group("oob"))
        _proof(tpl, "nics", msg)
        if pat.is_plugin_network(match.group("net").strip()):
            tpl.op("plugin_own", match.group("net").strip())
            _proof(tpl, "plugin_own", msg)
    elif match := pat.TCPX_ENABLE.match(msg):
        if match.group("on") == "1":
            tpl.op("touch", "networks", "GPUDirectTCPX")
            tpl.op("plugin_or", "GPUDirectTCPX")
    elif match := pat.PLUGIN_VERSION.match(msg) or pat.PLUGIN_INITIALIZING.match(msg):
        tpl.op("touch", "networks", match.group("net"))
        tpl.op("plugin_or", f"{match.group('net')} {match.group('ver').rstrip('.')}")
        tpl.op("plugin_version", match.group("ver").rstrip("."))
        _proof(tpl, "plugin_loaded", msg)
    elif (net := pat.plugin_network_prefix(msg)) is not None:  # `NET/FastSocket : Tx CPU start: -2`
        tpl.op("plugin_own", net)
        tpl.op("touch", "networks", net)
        _proof(tpl, "plugin_own", msg)
    elif not _gdr_pair(tpl, msg):
        _error_words(tpl, msg)


def _net_using(tpl: Template, net: str, devs: str, oob: str | None) -> None:
    devices = [m.group("dev") for m in pat.NET_DEVICE.finditer(devs)]
    if pat.network_kind(net) == "socket" and net == "Socket":
        for dev in devices:
            tpl.op("interface", dev.split(":", 1)[0])
        if devices and ":" in devices[0]:  # the host's own address: two machines with one name differ here
            tpl.line_op("address", HOST, devices[0].split(":", 1)[1].split("<", 1)[0])
        tpl.op("touch", "networks", net)
    else:
        for dev in devices:
            tpl.op("net_device", dev)
        tpl.op("touch", "networks", net)
        tpl.op("device_count", len(devices))
    if oob:
        tpl.op("interface", oob.split(":", 1)[0])


def _plugin(tpl: Template, msg: str) -> None:
    if match := pat.PLUGIN_LOADED.match(msg):
        field = "net_plugin" if match.group("what") == "net" else "collnet_plugin"
        tpl.slot(field, "", pat.PLUGIN_API_SUFFIX.sub("", match.group("name").strip()))
        _proof(tpl, "plugin_loaded" if field == "net_plugin" else "collnet_plugin", msg)
        return
    failed = pat.PLUGIN_LOAD_FAILED.match(msg)
    missing = pat.PLUGIN_NOT_FOUND.match(msg)
    if failed or missing:
        lib = (failed and failed.group("lib")) or (missing and missing.group("lib"))
        why = failed.group("why").strip() or None if failed else None
        tpl.op("plugin_failed", lib or "libnccl-net.so", bool(failed), why)
        _proof(tpl, "plugin_missing", msg)
