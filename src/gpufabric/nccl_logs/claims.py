"""The structured attestation: what a careful reader of an NCCL log can claim, each claim with the log
lines that prove it and a confidence (proven / inferred / unknown).

Evidence rules (issue: no false claim on real-world logs):
- a net plugin is in use only when the log says it loaded (``Loaded net plugin``, ``Plugin Path``, its init
  or version line) or it speaks for itself (its own ``NET/<name>`` lines, its source files in WARN headers);
  it is refused when it says so (``NET/OFI Only EFA provider is supported``) or disabled by the environment;
- "between nodes" only when the log shows NET channels, more than one host, or NCCL's own node count;
  one-host logs say so, and a log of one host without rank counts claims nothing about the others;
- virtual nodes (``NCCL_HOSTID set by environment to vnodeN``) are separate nodes on one host;
- unknown plugins are named from their own lines, never mapped onto a built-in transport.
"""

from __future__ import annotations

from gpufabric.nccl_logs import patterns as pat
from gpufabric.results.attestation import Attestation, Claim, Confidence, TransportClaims

_BUILT_IN = ("IB", "Socket")


def _claim(value: str | int | bool | None, confidence: Confidence, lines: list[str], note: str = "") -> Claim:
    return Claim(value=value, confidence=confidence, lines=lines[:3], note=note)


def _lines(att: Attestation, *facts: str) -> list[str]:
    out: list[str] = []
    for fact in facts:
        out.extend(att.proofs.get(fact, []))
    return out[:3]


def physical_hosts(att: Attestation) -> list[str]:
    return list(att.hosts)


def net_loops_back(att: Attestation) -> bool:
    """Every NET channel of the log joins two ranks of one host (one process driving several GPUs through
    the NIC, or P2P/SHM disabled): the network carried traffic, but none of it left the host."""
    return 0 < att.net_pairs == att.intra_host_net_links and not att.virtual_nodes


def multi_host(att: Attestation) -> bool:
    """The log proves more than one node: NET channels that leave a host, NCCL's node count, or several
    hosts."""
    crossing_links = (att.transport_kinds.get("net") and not net_loops_back(att)) or att.transport_kinds.get(
        "collnet"
    )
    return bool(
        crossing_links
        or (att.nnodes or 0) > 1
        or len(att.hosts) > 1
        or len(att.host_name_clash) > 0
        or bool(att.proofs.get("remote_peer"))
    )


def virtual_only(att: Attestation) -> bool:
    """Every node of the run is a virtual node (NCCL_HOSTID) of one physical host."""
    return bool(att.virtual_nodes) and len(att.hosts) <= 1


def plugin_fell_back(att: Attestation) -> bool:
    """A net plugin loaded, yet NCCL used one of its own networks (``Using network Socket`` after the HPC-X
    plugin found no device, VLMEvalKit#975): loaded is not used."""
    network = att.network or ""
    return bool(
        att.net_plugin_loaded and att.net_plugin and network in _BUILT_IN and network != att.net_plugin
    )


def plugin_state(att: Attestation) -> str:
    """refused, disabled, fallback, loaded, own-lines, not-found or none-logged."""
    if att.net_plugin_refused:
        return "refused"
    ibext = (att.net_plugin or "").lower().startswith("ibext") or "ibext" in (att.network or "").lower()
    if ibext and att.nccl_env.get("NCCL_IBEXT_DISABLE") == "1":
        return "disabled"
    if plugin_fell_back(att):
        return "fallback"
    if att.proofs.get("plugin_loaded") or (att.net_plugin_loaded and att.net_plugin_path):
        return "loaded"
    if att.net_plugin_loaded and att.proofs.get("plugin_own"):
        return "own-lines"
    if att.net_plugin_loaded:
        return "loaded"
    if att.net_plugin_loaded is False:
        return "not-found"
    return "none-logged"


def _plugin(att: Attestation) -> Claim:
    state = plugin_state(att)
    name = att.net_plugin or "libnccl-net.so"
    version = (
        f" {att.net_plugin_version}" if att.net_plugin_version and att.net_plugin_version not in name else ""
    )
    where = f" from {att.net_plugin_path}" if att.net_plugin_path else ""
    if state == "refused":
        return _claim(
            f"{name} (refused)",
            "proven",
            _lines(att, "plugin_refused"),
            f"the plugin loaded but refused to run ({att.net_plugin_refused}); NCCL went on without it",
        )
    if state == "disabled":
        return _claim(
            f"{name} (disabled)",
            "proven",
            _lines(att, "plugin_loaded"),
            f"loaded{where}, but NCCL_IBEXT_DISABLE=1 turned it off: NCCL uses its built-in transports",
        )
    if state == "fallback":
        return _claim(
            f"{name}{version} (loaded, not used)",
            "proven",
            _lines(att, "plugin_loaded", "network"),
            f"loaded{where}, but NCCL uses its own {att.network} transport: the plugin did not carry the "
            "traffic (it found no usable device, or NCCL_NET chose another network)",
        )
    if state == "loaded":
        return _claim(
            f"{name}{version}", "proven", _lines(att, "plugin_loaded", "plugin_own"), f"loaded{where}"
        )
    if state == "own-lines":
        return _claim(
            f"{name}{version}",
            "inferred",
            _lines(att, "plugin_own"),
            "no load line was logged, but the plugin's own messages show it running",
        )
    if state == "not-found":
        return _claim(
            None,
            "proven",
            _lines(att, "plugin_missing"),
            f"NCCL found no external net plugin ({name}); it uses its built-in transports",
        )
    if att.network_kind in ("ofi", "tcpx", "tcpxo", "gib") and att.transport_kinds.get("net"):
        shown = "aws-ofi-nccl" if att.network_kind == "ofi" else att.network
        return _claim(
            shown, "inferred", _lines(att, "link:net"), "channels run over a network only a plugin provides"
        )
    return _claim(None, "unknown", [], "the log says nothing about a net plugin")


def _network_name(att: Attestation) -> str | None:
    network = att.network
    if network is None and att.ofi_provider and not att.net_plugin_refused:
        network = "aws-ofi-nccl"
    if network and pat.network_kind(network) == "ofi" and att.ofi_provider:
        provider = att.ofi_provider
        tcp = "" if provider.startswith("efa") else ", TCP through the plugin, not NCCL's Socket"
        return f"{network} (libfabric provider {provider}{tcp})"
    if (
        network
        and network not in _BUILT_IN
        and att.net_plugin
        and plugin_state(att) in ("loaded", "own-lines")
    ):
        return (
            f"{network} (net plugin {att.net_plugin})"
            if att.net_plugin != network
            else f"{network} (net plugin)"
        )
    return network


def _inter_node(att: Attestation) -> Claim:
    network = _network_name(att)
    virtual = " between virtual nodes on one host (NCCL_HOSTID)" if virtual_only(att) else ""
    net_links = att.transport_kinds.get("net", 0) + att.transport_kinds.get("collnet", 0)
    if net_links and net_loops_back(att) and not multi_host(att):
        return _claim(
            "none",
            "proven" if att.nnodes == 1 else "inferred",
            _lines(att, "link:net", "nodes"),
            f"every {network or 'network'} channel joins two ranks of one host (loopback through the NIC, "
            "not NVLink/PCIe): no traffic between nodes is shown",
        )
    if net_links:
        return _claim(
            f"{network}{virtual}",
            "proven",
            _lines(att, "link:net", "link:collnet"),
            "channels cross the network",
        )
    if not multi_host(att):
        if att.nnodes == 1:
            lines = _lines(att, "nodes", "ranks", "tests_ranks")
            return _claim("none", "proven", lines, "every rank is on one host: nothing crosses hosts")
        seen = f"NCCL set up {network}, but " if network else ""
        one = "one host" if len(att.hosts) == 1 else "no host name"
        return _claim(
            None,
            "unknown",
            _lines(att, "network"),
            f"{seen}the log shows {one} and no network channel: nothing proves traffic between nodes",
        )
    if network:
        return _claim(
            f"{network}{virtual}",
            "inferred",
            _lines(att, "network", "plugin_own", "provider", "nics"),
            "NCCL selected this network on a multi-node run; no channel line shows it carrying traffic",
        )
    return _claim(None, "unknown", [], "the log names no network")


def _intra_node(att: Attestation) -> Claim:
    kinds = {k: n for k, n in att.transport_kinds.items() if k in ("p2p", "shm", "nvls") and n}
    if att.nvls:
        kinds.setdefault("nvls", 0)
    if not kinds:
        note = "no intra-node channel in the log"
        if att.intra_host_net_links:
            return _claim(
                "net", "proven", _lines(att, "link:net"), "ranks of one host connect through the network"
            )
        return _claim(None, "unknown", [], note)
    shown = ", ".join(sorted(kinds))
    note = "P2P is NVLink or PCIe peer access (the channel line does not say which)" if "p2p" in kinds else ""
    if set(kinds) == {"shm"}:
        note = "shared memory only: no GPU peer-to-peer (NVLink not in use)"
    facts = [f"link:{k}" for k in sorted(kinds)]
    return _claim(shown, "proven", _lines(att, *facts), note)


def _gdr(att: Attestation) -> Claim:
    kind = att.network_kind
    if kind in ("socket", "tcpx", "tcpxo", "other") and not att.gdr:
        return _claim(None, "unknown", [], f"not applicable to {att.network or 'this network'}")
    if att.gdr is True:
        return _claim(True, "proven", _lines(att, "link:net"), "network links carry /GDRDMA")
    if att.gdr is False and att.transport_kinds.get("net"):
        return _claim(False, "proven", _lines(att, "link:net"), "network links without /GDRDMA")
    if att.gdr is False:
        return _claim(False, "inferred", [], f"GDR disabled for {', '.join(att.gdr_disabled_devices[:3])}")
    return _claim(None, "unknown", [], "the log does not say")


def _nics(att: Attestation) -> Claim:
    used = {host: len(devs) for host, devs in att.net_devices_used.items() if host != "?"}
    if used:
        fewest = min(used.values())
        return _claim(fewest, "proven", _lines(att, "link:net"), f"NET devices used per host: {used}")
    if att.net_device_count:
        return _claim(att.net_device_count, "inferred", _lines(att, "nics", "provider"), "NICs NCCL found")
    return _claim(None, "unknown", [], "no NIC list or NET channel in the log")


def _nodes(att: Attestation) -> Claim:
    if virtual_only(att):
        count = len(att.virtual_nodes)
        host = att.hosts[0] if att.hosts else "one host"
        return _claim(
            count, "proven", _lines(att, "hostid"), f"virtual nodes on one host ({host}, NCCL_HOSTID)"
        )
    if att.host_name_clash:
        return _claim(
            None,
            "unknown",
            _lines(att, "nics"),
            f"host name {att.host_name_clash[0]} carries several addresses: two machines share one name",
        )
    if att.nnodes:
        return _claim(att.nnodes, "proven", _lines(att, "nodes", "ranks", "tests_ranks"))
    if att.proofs.get("remote_peer"):
        return _claim(
            2, "inferred", _lines(att, "remote_peer"), "at least 2: the plugin talks to another address"
        )
    if att.hosts:
        n = len(att.hosts)
        if n == 1 and att.uses_network and not net_loops_back(att):  # a NET link leaves the one host logged
            return _claim(
                2, "inferred", _lines(att, "link:net"), "at least 2: a network channel leaves the host"
            )
        return _claim(n, "inferred", _lines(att, "tests_ranks"), f"at least {n} host(s) appear in the log")
    return _claim(None, "unknown", [], "the log names no hosts")


def _ranks(att: Attestation) -> Claim:
    if att.nranks:
        return _claim(att.nranks, "proven", _lines(att, "ranks", "nodes", "tests_ranks"))
    seen = {r.rank for r in att.ranks} | {link.rank for link in att.channel_links if link.rank is not None}
    seen |= {link.peer for link in att.channel_links if link.peer is not None}
    if seen:
        return _claim(
            max(seen) + 1,
            "inferred",
            _lines(att, "tests_ranks", "link:net"),
            "at least: the highest rank index + 1",
        )
    return _claim(None, "unknown", [], "no rank lines in the log")


def build_claims(att: Attestation) -> TransportClaims:
    """Every claim from a finished attestation (its ``proofs`` give the lines)."""
    provider = (
        _claim(att.ofi_provider, "proven", _lines(att, "provider"))
        if att.ofi_provider
        else _claim(None, "unknown", [], "no libfabric provider line")
    )
    return TransportClaims(
        inter_node=_inter_node(att),
        intra_node=_intra_node(att),
        net_plugin=_plugin(att),
        provider=provider,
        gdr=_gdr(att),
        nics_per_host=_nics(att),
        nodes=_nodes(att),
        ranks=_ranks(att),
    )
