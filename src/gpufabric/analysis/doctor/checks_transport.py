"""Checks on which network NCCL really used: NCCL output present, fabric in use (silent socket fallback),
net plugin, libfabric provider. NICs, GDR and the intra-node path are in ``checks_links.py``.

Each check reads an ``Attestation`` and judges it in context: a missing ``libnccl-net.so`` is a failure
when EFA is expected and nothing at all on one NVLink host.
"""

from __future__ import annotations

from gpufabric.analysis.doctor.evidence import Evidence, Expectation
from gpufabric.analysis.doctor.model import CheckResult, Verdict
from gpufabric.catalog import FabricName
from gpufabric.results.attestation import Attestation

_PLUGIN_DIRS = {
    FabricName.EFA: "/opt/amazon/ofi-nccl/lib (or /opt/aws-ofi-nccl/install/lib)",
    FabricName.GPUDIRECT_TCPX: "/usr/local/tcpx/lib64 (RxDM daemon running, /run/tcpx mounted)",
    FabricName.GPUDIRECT_TCPXO: "/usr/local/nvidia/lib64 (tcpxo-daemon running, /dev/aperture_devices)",
    FabricName.GPUDIRECT_RDMA: "/usr/local/gib/lib64 (source /usr/local/gib/scripts/set_nccl_env.sh)",
}


RERUN_WITH_DEBUG = (
    "rerun with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,ENV (gpufabric bench captures it always)"
)


def links_summary(att: Attestation) -> str:
    return ", ".join(f"{t} x{n}" for t, n in sorted(att.transports.items(), key=lambda kv: -kv[1])[:4])


def one_host(ev: Evidence) -> bool:
    return ev.nodes == 1


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
    shape = f"{ev.nodes_text}" + (f", {ev.ranks} ranks" if ev.ranks else "")
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
    if att.net_plugin_loaded is False and exp.needs_plugin:
        why = f": {att.net_plugin_error}" if att.net_plugin_error else ""
        return f"the net plugin did not load ({att.net_plugin or 'libnccl-net.so'}{why})"
    if att.ofi_provider and att.ofi_provider != "efa":
        return f"libfabric selected provider {att.ofi_provider!r}, not efa"
    if exp.network == "ib" and not att.net_devices:
        return "NCCL found no InfiniBand/RoCE device (NET/IB : No device found)"
    return "NCCL did not select the fabric's network"


def _fallback_fix(exp: Expectation) -> str:
    fabric = exp.fabric
    if fabric is FabricName.EFA:
        return (
            "attach the EFA devices (pod: vpc.amazonaws.com/efa, docker: --device=/dev/infiniband), put "
            f"aws-ofi-nccl on LD_LIBRARY_PATH ({_PLUGIN_DIRS[fabric]}), set FI_PROVIDER=efa; "
            "NCCL_NET='AWS Libfabric' makes NCCL fail instead of falling back"
        )
    if fabric in _PLUGIN_DIRS:
        return f"put the plugin on LD_LIBRARY_PATH: {_PLUGIN_DIRS[fabric]}"
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
    if one_host(ev) or exp.intra_node_only:
        return CheckResult(
            id="fabric-in-use",
            title=title,
            verdict=Verdict.SKIP,
            cause="one host: there is no inter-node traffic to judge",
        )
    net_links = att.transport_kinds.get("net", 0)
    actual = att.network_kind
    seen = (
        f"channels via {links_summary(att)}"
        if net_links
        else f"NCCL selected network {att.network!r} "
        "(no channel lines logged; NCCL_DEBUG_SUBSYS without INIT?)"
    )
    evidence = [seen] + ([f"networks: {att.networks}"] if att.networks else [])
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
            f"NCCL used TCP sockets between nodes ({seen}); if this cluster has a faster fabric it is "
            "not in use"
            if actual == "socket"
            else f"NCCL used {att.network} between nodes ({seen})"
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
            cause=f"NCCL used {att.network} as expected ({exp.source}): {seen}",
        )
    if exp.network == "socket":
        return CheckResult(
            id="fabric-in-use",
            title=title,
            verdict=Verdict.FAIL,
            evidence=evidence,
            cause=f"expected TCP sockets (a fabric-off run) but NCCL used {att.network}",
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
        cause=f"NCCL used {att.network} but {exp.source} expects {exp.fabric}",
        fix=_fallback_fix(exp),
    )


def check_net_plugin(ev: Evidence, exp: Expectation) -> CheckResult:
    title = "network plugin"
    att = ev.attestation
    if att is None or not att.has_nccl_output:
        return no_log_result("net-plugin", title)
    name = att.net_plugin or "libnccl-net.so"
    if att.net_plugin_loaded:
        where = f" from {att.net_plugin_path}" if att.net_plugin_path else ""
        return CheckResult(id="net-plugin", title=title, verdict=Verdict.PASS, cause=f"loaded {name}{where}")
    if exp.needs_plugin and one_host(ev):
        # One host sends nothing between nodes, so its log can neither prove nor disprove the fabric
        # (a healthy NVLink run here says the same as a node without the plugin): a warning, not a failure.
        seen = f"NCCL could not load {name} here" if att.net_plugin_loaded is False else "no plugin logged"
        return CheckResult(
            id="net-plugin",
            title=title,
            verdict=Verdict.WARN,
            cause=f"single host: NET transport not exercised; run on >=2 nodes to attest "
            f"{exp.fabric.value if exp.fabric else 'the fabric'} ({seen})",
            fix=f"run the benchmark across >=2 nodes; the plugin must be on LD_LIBRARY_PATH there: "
            f"{_PLUGIN_DIRS.get(exp.fabric or FabricName.EFA)}",
        )
    if not exp.needs_plugin:
        context = (
            "one host: no network plugin is needed"
            if one_host(ev) or exp.intra_node_only
            else f"{exp.fabric or 'this run'} uses NCCL's built-in transport"
        )
        return CheckResult(
            id="net-plugin",
            title=title,
            verdict=Verdict.PASS if att.net_plugin_loaded is False else Verdict.SKIP,
            cause=f"{context}; 'Could not find: {name}' is expected and harmless here",
        )
    if att.net_plugin_loaded is None:
        return CheckResult(
            id="net-plugin",
            title=title,
            verdict=Verdict.WARN,
            cause=f"{exp.fabric} needs a net plugin but the log says nothing about loading one",
            fix="add NET to NCCL_DEBUG_SUBSYS, or check NCCL_NET_PLUGIN / LD_LIBRARY_PATH",
        )
    why = f": {att.net_plugin_error}" if att.net_plugin_error else ""
    return CheckResult(
        id="net-plugin",
        title=title,
        verdict=Verdict.FAIL,
        cause=f"{exp.fabric} needs its NCCL net plugin, but NCCL could not load {name}{why}",
        fix=f"put the plugin on LD_LIBRARY_PATH: {_PLUGIN_DIRS.get(exp.fabric or FabricName.EFA)}; "
        "`gpufabric doctor --preflight` lists what is resolvable",
    )


def check_ofi_provider(ev: Evidence, exp: Expectation) -> CheckResult:
    title = "libfabric provider is efa"
    att = ev.attestation
    if att is None or not (exp.fabric is FabricName.EFA or (att.network_kind == "ofi")):
        return CheckResult(
            id="ofi-provider", title=title, verdict=Verdict.SKIP, cause="no libfabric (OFI) in play"
        )
    if att.ofi_provider == "efa":
        return CheckResult(
            id="ofi-provider", title=title, verdict=Verdict.PASS, cause="NET/OFI selected provider efa"
        )
    if att.ofi_provider:
        return CheckResult(
            id="ofi-provider",
            title=title,
            verdict=Verdict.FAIL,
            cause=f"libfabric selected provider {att.ofi_provider!r}: traffic runs over TCP, not EFA",
            fix="set FI_PROVIDER=efa and expose the EFA devices (/dev/infiniband/uverbs*); "
            "`fi_info -p efa` must list them",
        )
    return CheckResult(
        id="ofi-provider",
        title=title,
        verdict=Verdict.SKIP,
        cause="the log does not name the libfabric provider (aws-ofi-nccl INFO lines missing)",
    )
