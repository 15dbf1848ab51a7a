"""Checks on which network NCCL really used: NCCL output present, fabric in use (silent socket fallback).
The net plugin and libfabric provider are in ``checks_plugin.py``; NICs, GDR and the intra-node path in
``checks_links.py``.

Each check reads an ``Attestation`` and judges it in context: a missing ``libnccl-net.so`` is a failure
when EFA is expected and nothing at all on one NVLink host.
"""

from __future__ import annotations

from gpufabric.analysis.doctor.evidence import Evidence, Expectation
from gpufabric.analysis.doctor.model import CheckResult, Verdict
from gpufabric.catalog import FabricName
from gpufabric.nccl_logs.claims import (
    build_claims,
    multi_host,
    net_loops_back,
    plugin_fell_back,
    virtual_only,
)
from gpufabric.nccl_logs.patterns import transport_kind
from gpufabric.results.attestation import Attestation, NetworkKind

PLUGIN_DIRS = {
    FabricName.EFA: "/opt/amazon/ofi-nccl/lib (or /opt/aws-ofi-nccl/install/lib)",
    FabricName.GPUDIRECT_TCPX: "/usr/local/tcpx/lib64 (RxDM daemon running, /run/tcpx mounted)",
    FabricName.GPUDIRECT_TCPXO: "/usr/local/nvidia/lib64 (tcpxo-daemon running, /dev/aperture_devices)",
    FabricName.GPUDIRECT_RDMA: "/usr/local/gib/lib64 (source /usr/local/gib/scripts/set_nccl_env.sh)",
}


RERUN_WITH_DEBUG = (
    "rerun with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,ENV (gpufabric bench captures it always)"
)


def links_summary(att: Attestation, *, net_only: bool = False) -> str:
    """The most used transports with their channel-link counts, e.g. 'NET/Socket/0 x32, P2P/IPC x6'."""
    links = {t: n for t, n in att.transports.items() if not net_only or transport_kind(t) == "net"}
    return ", ".join(f"{t} x{n}" for t, n in sorted(links.items(), key=lambda kv: -kv[1])[:4])


def one_host(ev: Evidence) -> bool:
    return ev.nodes == 1


def crosses_hosts(ev: Evidence) -> bool:
    """The inputs prove more than one node took part: NET channels, NCCL's node count, several hosts
    (a result's host list too), or a plugin talking to another address. Without it, "between nodes" is
    never said (a one-host log, a single-host init failure)."""
    att = ev.attestation
    return (att is not None and multi_host(att)) or ev.min_nodes > 1


def ofi_evidence(att: Attestation) -> str | None:
    """What in the log proves aws-ofi-nccl (libfabric) is in play, or None. Its NET/OFI lines are printed
    only by the loaded plugin, so they prove it as well as a 'Loaded net plugin' line or OFI channels do;
    many captures (CloudWatch, NCCL_DEBUG_SUBSYS=NET) hold only those lines."""
    if att.net_plugin_refused:  # its NET/OFI lines then say it stepped aside, not that it carried anything
        return None
    if att.network_kind == "ofi":
        net = links_summary(att, net_only=True)
        return f"channels via {net}" if net else f"NCCL selected {att.network}"
    if att.ofi_provider:
        nics = f", found {att.net_device_count} NICs" if att.net_device_count else ""
        return f"NET/OFI selected provider {att.ofi_provider}{nics}"
    if att.net_plugin and "ofi" in att.net_plugin.lower():
        return f"loaded {att.net_plugin}"
    return next((f"NET/OFI message: {m}" for m in att.warnings + att.errors if "NET/OFI" in m), None)


def network_in_use(att: Attestation) -> NetworkKind | None:
    """The network kind NCCL used: the attested one, else OFI when only the plugin's lines prove it."""
    return att.network_kind or ("ofi" if ofi_evidence(att) else None)


def no_log_result(check_id: str, title: str) -> CheckResult:
    return CheckResult(
        id=check_id,
        title=title,
        verdict=Verdict.SKIP,
        cause="no NCCL_DEBUG=INFO output in the inputs, so the transport cannot be attested",
        fix=RERUN_WITH_DEBUG,
    )


def check_nccl_output(ev: Evidence, exp: Expectation) -> CheckResult:
    att = ev.attestation
    title = "NCCL debug output present"
    if att is None or not att.has_nccl_output:
        return CheckResult(
            id="nccl-output",
            title=title,
            verdict=Verdict.WARN,
            cause="the inputs carry no NCCL_DEBUG=INFO lines: numbers without proof of their transport",
            fix=RERUN_WITH_DEBUG,
        )
    versions = ", ".join(att.nccl_versions) or "version not logged"
    ranks = (att.claims or build_claims(att)).ranks
    if ev.ranks:
        shown = f", {ev.ranks} ranks"
    elif isinstance(ranks.value, int):  # the highest rank index the log shows, + 1
        shown = f", at least {ranks.value} ranks"
    else:
        shown = ""
    shape = f"{ev.nodes_text}{shown}"
    if len(att.nccl_versions) > 1:
        return CheckResult(
            id="nccl-output",
            title=title,
            verdict=Verdict.WARN,
            cause=f"ranks run different NCCL versions ({versions}): mixed builds can hang or fall back",
            fix="use one NCCL build on every node (same image / LD_LIBRARY_PATH everywhere)",
        )
    return CheckResult(
        id="nccl-output",
        title=title,
        verdict=Verdict.PASS,
        cause=f"{att.nccl_lines} NCCL lines, NCCL {versions}, {att.channel_links_total} channel links; "
        f"{shape}",
    )


def _fallback_cause(att: Attestation, exp: Expectation) -> str:
    if plugin_fell_back(att):
        return f"the net plugin {att.net_plugin} loaded, then NCCL chose its own {att.network} transport"
    if att.net_plugin_loaded is False and exp.needs_plugin:
        why = f": {att.net_plugin_error}" if att.net_plugin_error else ""
        return f"the net plugin did not load ({att.net_plugin or 'libnccl-net.so'}{why})"
    if att.ofi_provider and not att.ofi_provider.startswith("efa"):
        return f"libfabric selected provider {att.ofi_provider!r}, not efa"
    if exp.network == "ib" and not att.net_devices:
        return "NCCL found no InfiniBand/RoCE device (NET/IB : No device found)"
    return "NCCL did not select the fabric's network"


def _fallback_fix(exp: Expectation) -> str:
    fabric = exp.fabric
    if fabric is FabricName.EFA:
        return (
            "attach the EFA devices (pod: vpc.amazonaws.com/efa, docker: --device=/dev/infiniband), put "
            f"aws-ofi-nccl on LD_LIBRARY_PATH ({PLUGIN_DIRS[fabric]}), set FI_PROVIDER=efa; "
            "NCCL_NET='AWS Libfabric' makes NCCL fail instead of falling back"
        )
    if fabric in PLUGIN_DIRS:
        return f"put the plugin on LD_LIBRARY_PATH: {PLUGIN_DIRS[fabric]}"
    if exp.network == "ib":
        return (
            "mount /dev/infiniband (IPC_LOCK, memlock unlimited), check NCCL_IB_HCA; NCCL_NET=IB fails loudly"
        )
    return "see `gpufabric plan` for the environment this fabric needs"


def check_fabric_in_use(ev: Evidence, exp: Expectation) -> CheckResult:
    title = "inter-node traffic uses the expected fabric"
    att = ev.attestation
    if att is None or not att.has_nccl_output:
        return no_log_result("fabric-in-use", title)
    if (one_host(ev) and not att.virtual_nodes) or exp.intra_node_only:
        return CheckResult(
            id="fabric-in-use",
            title=title,
            verdict=Verdict.SKIP,
            cause="one host: there is no inter-node traffic to judge",
        )
    net_links = att.transport_kinds.get("net", 0)
    actual = network_in_use(att)
    if not crosses_hosts(ev) and net_loops_back(att):
        return CheckResult(
            id="fabric-in-use",
            title=title,
            verdict=Verdict.SKIP,
            evidence=[f"channels via {links_summary(att, net_only=True)}"],
            cause=f"every {att.network or 'network'} channel joins two ranks of one host (loopback through "
            "the NIC): the log shows no traffic between nodes to judge",
            fix="the intra-node check says why one host's GPUs talk through the NIC",
        )
    if not crosses_hosts(ev):
        set_up = f"NCCL set up {att.network}, but " if att.network else ""
        hosts = f"one host ({att.hosts[0]})" if len(att.hosts) == 1 else "no host name"
        return CheckResult(
            id="fabric-in-use",
            title=title,
            verdict=Verdict.SKIP,
            cause=f"{set_up}the log shows {hosts} and no network channel: nothing proves traffic between "
            "nodes (a single-host run, or one rank's log of a larger job)",
            fix="give every rank's log (or the nccl-tests output with NCCL_DEBUG=INFO) to judge the fabric",
        )
    virtual = " between virtual nodes on one host (NCCL_HOSTID)" if virtual_only(att) else " between nodes"
    network = att.network or "AWS Libfabric (OFI)"
    if net_links:
        seen = f"channels via {links_summary(att)}"
    elif att.network_kind is None and actual == "ofi":
        seen = f"{ofi_evidence(att)}; no channel lines logged (NCCL_DEBUG_SUBSYS without INIT?)"
    else:
        seen = (
            f"NCCL selected network {att.network!r} "
            "(no channel lines logged; NCCL_DEBUG_SUBSYS without INIT?)"
        )
    evidence = [seen] + ([f"networks: {att.networks}"] if att.networks else [])
    provider = att.ofi_provider or ""
    if actual == "ofi" and provider and not provider.startswith("efa"):
        tcp = f"libfabric provider {provider}: TCP through aws-ofi-nccl, not EFA and not NCCL's Socket"
        return CheckResult(
            id="fabric-in-use",
            title=title,
            verdict=Verdict.FAIL if exp.fabric is FabricName.EFA else Verdict.WARN,
            evidence=evidence,
            cause=f"{tcp} ({exp.source})",
            fix=_fallback_fix(exp) if exp.fabric is FabricName.EFA else "set FI_PROVIDER=efa on EFA hosts",
        )
    if actual is None:
        return CheckResult(
            id="fabric-in-use",
            title=title,
            verdict=Verdict.SKIP,
            evidence=evidence,
            cause="the log names no network (NCCL_DEBUG_SUBSYS must include INIT and NET)",
        )
    if exp.network is None:
        verdict = Verdict.WARN if actual == "socket" else Verdict.PASS
        cause = (
            f"NCCL used TCP sockets{virtual} ({seen}); if this cluster has a faster fabric it is not in use"
            if actual == "socket"
            else f"NCCL used {network}{virtual} ({seen})"
        )
        return CheckResult(
            id="fabric-in-use",
            title=title,
            verdict=verdict,
            cause=cause,
            evidence=evidence,
            fix="pass --expect or --instance-type to judge it" if verdict is Verdict.WARN else "",
        )
    if actual == exp.network:
        return CheckResult(
            id="fabric-in-use",
            title=title,
            verdict=Verdict.PASS,
            evidence=evidence,
            cause=f"NCCL used {network} as expected ({exp.source}): {seen}",
        )
    if exp.network == "socket":
        return CheckResult(
            id="fabric-in-use",
            title=title,
            verdict=Verdict.FAIL,
            evidence=evidence,
            cause=f"expected TCP sockets (a fabric-off run) but NCCL used {network}",
            fix="the off profile did not take effect: set NCCL_NET=Socket for this run",
        )
    if actual == "socket":
        return CheckResult(
            id="fabric-in-use",
            title=title,
            verdict=Verdict.FAIL,
            evidence=evidence,
            cause=f"silent fallback to TCP sockets: {_fallback_cause(att, exp)} ({exp.source})",
            fix=_fallback_fix(exp),
        )
    return CheckResult(
        id="fabric-in-use",
        title=title,
        verdict=Verdict.FAIL,
        evidence=evidence,
        cause=f"NCCL used {network} but {exp.source} expects {exp.fabric}",
        fix=_fallback_fix(exp),
    )
