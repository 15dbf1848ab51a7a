"""Checks on the network plugin NCCL needs for the fabric (aws-ofi-nccl, TCPX/TCPXO, gIB) and on the
libfabric provider aws-ofi-nccl selected.

Judged in context: a missing ``libnccl-net.so`` is a failure when EFA is expected and nothing at all on one
NVLink host; aws-ofi-nccl's own NET/OFI lines prove it loaded even where NCCL logged no 'Loaded' line.
"""

from __future__ import annotations

from gpufabric.analysis.doctor.checks_transport import (
    PLUGIN_DIRS,
    network_in_use,
    no_log_result,
    ofi_evidence,
    one_host,
)
from gpufabric.analysis.doctor.evidence import Evidence, Expectation
from gpufabric.analysis.doctor.model import CheckResult, Verdict
from gpufabric.catalog import FabricName
from gpufabric.nccl_logs.claims import build_claims, plugin_state


def check_net_plugin(ev: Evidence, exp: Expectation) -> CheckResult:
    title = "network plugin"
    att = ev.attestation
    if att is None or not att.has_nccl_output:
        return no_log_result("net-plugin", title)
    name = att.net_plugin or "libnccl-net.so"
    state = plugin_state(att)
    claim = build_claims(att).net_plugin if att.claims is None else att.claims.net_plugin
    if state in ("refused", "disabled"):
        needed = exp.needs_plugin and not (state == "disabled" and exp.network == "ib")
        return CheckResult(
            id="net-plugin",
            title=title,
            verdict=Verdict.FAIL if needed else Verdict.PASS,
            evidence=claim.lines,
            cause=f"{claim.value}: {claim.note}" + ("" if needed else "; nothing here needs it"),
            fix=f"{exp.fabric} needs it: {PLUGIN_DIRS.get(exp.fabric or FabricName.EFA)}; on EFA hosts "
            "attach the EFA devices (/dev/infiniband) and set FI_PROVIDER=efa"
            if needed
            else "",
        )
    if state == "fallback":
        # Loaded is not used: the plugin library came up, then NCCL said `Using network Socket` (or IB).
        return CheckResult(
            id="net-plugin",
            title=title,
            verdict=Verdict.FAIL if exp.needs_plugin else Verdict.WARN,
            evidence=claim.lines,
            cause=f"{name} loaded, but NCCL fell back to its built-in {att.network} transport: the plugin "
            "carries no traffic",
            fix="check that the plugin sees its devices (/dev/infiniband in the container, NCCL_IB_HCA, "
            "NCCL_IB_DISABLE/NCCL_NET not forcing another network); NCCL_NET=<plugin network> makes NCCL "
            "fail instead of falling back",
        )
    if att.net_plugin_loaded:
        version = (
            f" {att.net_plugin_version}"
            if att.net_plugin_version and att.net_plugin_version not in name
            else ""
        )
        where = f" from {att.net_plugin_path}" if att.net_plugin_path else ""
        how = "loaded" if state == "loaded" else "running (its own messages; no load line logged)"
        cause = f"{how}: {name}{version}{where}"
        ofi = ofi_evidence(att) if state == "own-lines" else None
        if ofi:  # the plugin's own lines prove it loaded, whatever NCCL said about other library names
            cause = f"the aws-ofi-nccl (libfabric) plugin is in use: {ofi}"
        return CheckResult(
            id="net-plugin", title=title, verdict=Verdict.PASS, evidence=claim.lines, cause=cause
        )
    ofi = ofi_evidence(att)
    if ofi:  # the plugin's own lines prove it loaded, whatever NCCL said about other library names
        return CheckResult(
            id="net-plugin",
            title=title,
            verdict=Verdict.PASS,
            evidence=[ofi],
            cause=f"the aws-ofi-nccl (libfabric) plugin is in use: {ofi}",
        )
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
            f"{PLUGIN_DIRS.get(exp.fabric or FabricName.EFA)}",
        )
    if not exp.needs_plugin:
        if one_host(ev) or exp.intra_node_only:
            context = "one host: no network plugin is needed"
        elif exp.fabric:
            context = f"{exp.fabric} uses NCCL's built-in transport"
        elif network_in_use(att) in ("socket", "ib"):
            context = f"NCCL used its built-in {att.network} transport"
        else:  # claim nothing the log does not show
            context = "no fabric expected (pass --expect or --instance-type to judge the plugin)"
        if att.net_plugin_loaded is None:  # quote no message the log does not hold
            collnet = (
                f" (the {att.collnet_plugin} CollNet plugin runs: HPC-X ships it in its libnccl-net.so)"
                if att.collnet_plugin
                else ""
            )
            return CheckResult(
                id="net-plugin",
                title=title,
                verdict=Verdict.SKIP,
                cause=f"{context}; the log names no net plugin{collnet}"
                if collnet
                else f"{context}; the log says nothing about a net plugin",
            )
        error = att.net_plugin_error or ""
        if error and "No such file" not in error:  # the library is there but broken: not harmless
            return CheckResult(
                id="net-plugin",
                title=title,
                verdict=Verdict.WARN,
                cause=f"{context}, but a net plugin is installed and failed to load ({error})",
                fix="fix the dependency the error names, or take the plugin off LD_LIBRARY_PATH",
            )
        why = f" ({error})" if error else ""
        return CheckResult(
            id="net-plugin",
            title=title,
            verdict=Verdict.PASS,
            cause=f"{context}; NCCL's note that it found no {name}{why} is expected and harmless here",
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
        fix=f"put the plugin on LD_LIBRARY_PATH: {PLUGIN_DIRS.get(exp.fabric or FabricName.EFA)}; "
        "`gpufabric doctor --preflight` lists what is resolvable",
    )


def check_ofi_provider(ev: Evidence, exp: Expectation) -> CheckResult:
    title = "libfabric provider is efa"
    att = ev.attestation
    if att is None or not (exp.fabric is FabricName.EFA or ofi_evidence(att)):
        return CheckResult(
            id="ofi-provider",
            title=title,
            verdict=Verdict.SKIP,
            cause="no libfabric (OFI) in play: the log has no NET/OFI lines or OFI channels",
        )
    if att.ofi_provider and att.ofi_provider.startswith("efa"):
        # `efa`, `efa-direct`, and NCCL 2.4-era `efa;ofi_rxr` (EFA under the RxR utility; aws-ofi-nccl#21)
        return CheckResult(
            id="ofi-provider",
            title=title,
            verdict=Verdict.PASS,
            cause=f"NET/OFI selected provider {att.ofi_provider}",
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
