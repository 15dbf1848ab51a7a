"""Checks on the links NCCL built: NICs in use against the shape (1 EFA of 4), GPUDirect RDMA on the
network links, and whether GPUs of one host talk over NVLink/PCIe or (a finding) over the network.
"""

from __future__ import annotations

from gpufabric.analysis.doctor.checks_transport import links_summary, no_log_result, one_host
from gpufabric.analysis.doctor.evidence import Evidence, Expectation
from gpufabric.analysis.doctor.model import CheckResult, Verdict
from gpufabric.catalog import FabricName
from gpufabric.expect.published import efa_count_figures
from gpufabric.nccl_logs.patterns import net_parts, network_kind, transport_kind
from gpufabric.results.attestation import Attestation


def check_nic_count(ev: Evidence, exp: Expectation) -> CheckResult:
    title = "all fabric NICs in use"
    att = ev.attestation
    if att is None or not att.has_nccl_output:
        return no_log_result("nic-count", title)
    wrong_network = exp.network is not None and att.network_kind != exp.network
    if one_host(ev) or exp.intra_node_only or not att.uses_network or wrong_network:
        cause = "no inter-node links over the expected network"
        return CheckResult(id="nic-count", title=title, verdict=Verdict.SKIP, cause=cause)
    expected = exp.instance.nic_count if exp.instance and exp.fabric == exp.instance.fabric else None
    found = att.net_device_count or (len(att.net_devices) or None)
    if found is None and att.network_kind == "socket":
        # NCCL's Socket transport lists its NICs as interfaces (`NET/Socket : Using [0]eth0:...`): a host
        # with one interface has one NIC to use, whatever its rank count.
        found = len(att.interfaces) or None
    used = {host: len(devs) for host, devs in att.net_devices_used.items()}
    fewest = min(used.values(), default=0)
    evidence = [f"NICs found: {found}", f"NICs used per host: {used}"]
    shape = exp.instance.name if exp.instance else "the shape"
    if expected and found is not None and found < expected:
        return CheckResult(
            id="nic-count",
            title=title,
            verdict=Verdict.FAIL,
            evidence=evidence,
            cause=f"NCCL found {found} of the {expected} {exp.fabric} NICs of {shape}"
            f" ({efa_count_figures()}; SkyPilot issue #8391)",
            fix="attach every NIC: all EFA interfaces need private IPs (no public IP), pod "
            "requests vpc.amazonaws.com/efa equal to the node's count",
        )
    # ranks per host only where the node count is known (an unknown count is not one host)
    ranks_per_host = (ev.ranks or 0) // ev.nodes if ev.nodes else 0
    # Without ranks per host the NICs a host should use are unknown (one rank often uses one NIC)
    known = (found, expected, ranks_per_host) if ranks_per_host else ()
    target = min((x for x in known if x), default=None)
    if target and fewest < target:
        return CheckResult(
            id="nic-count",
            title=title,
            verdict=Verdict.WARN,
            evidence=evidence,
            cause=f"a host sends through {fewest} NIC(s) while {target} are available to its ranks",
            fix="check NCCL_IB_HCA / NCCL_SOCKET_IFNAME lists and GPU-NIC affinity (nvidia-smi topo -m)",
        )
    if not used:
        return CheckResult(
            id="nic-count",
            title=title,
            verdict=Verdict.SKIP,
            evidence=evidence,
            cause="channel lines do not name NET devices",
        )
    return CheckResult(
        id="nic-count",
        title=title,
        verdict=Verdict.PASS,
        evidence=evidence,
        cause=f"every host uses {fewest} NIC(s)" + (f" of {expected}" if expected else ""),
    )


GDR_TITLE = "GPUDirect RDMA"


def check_gdr(ev: Evidence, exp: Expectation) -> CheckResult:
    title = GDR_TITLE
    att = ev.attestation
    rdma = att is not None and att.network_kind in ("ib", "ofi", "gib")
    if att is None or not rdma or one_host(ev):
        return CheckResult(id="gdr", title=title, verdict=Verdict.SKIP, cause="no RDMA network between nodes")
    partial = _partial_gdr(att)
    if partial is not None:
        return partial
    if att.gdr:
        return CheckResult(id="gdr", title=title, verdict=Verdict.PASS, cause="network links carry /GDRDMA")
    if att.gdr is None:
        return CheckResult(
            id="gdr", title=title, verdict=Verdict.SKIP, cause="the log does not say whether GDR is on"
        )
    disabled = ", ".join(att.gdr_disabled_devices) or "every network link lacks /GDRDMA"
    return CheckResult(
        id="gdr",
        title=title,
        verdict=Verdict.FAIL if exp.gdr_expected else Verdict.WARN,
        cause=f"GPUDirect RDMA is disabled ({disabled}): data bounces through host memory",
        fix="load nvidia-peermem (or use DMA-BUF: kernel >= 5.12, NCCL_DMABUF_ENABLE=1), check "
        "NCCL_NET_GDR_LEVEL and ACS/IOMMU settings (NVIDIA/nccl#1537); on EFA set "
        "FI_EFA_USE_DEVICE_RDMA=1 where the shape supports it",
    )


def _partial_gdr(att: Attestation) -> CheckResult | None:
    """Some network links with /GDRDMA and some without: NCCL judged GDR per GPU-NIC pair (PCI distance,
    NCCL_NET_GDR_LEVEL, a NIC without peermem), so the channels without it bounce through host memory."""
    # Only the network NCCL chose: a stray NET/Socket link is a different finding, not missing GDR.
    net = {
        t: n
        for t, n in att.transports.items()
        if transport_kind(t) == "net" and network_kind(net_parts(t)[0] or "") == att.network_kind
    }
    plain = {t: n for t, n in net.items() if not net_parts(t)[2]}
    if not plain or len(plain) == len(net):
        return None
    total, without = sum(net.values()), sum(plain.values())
    # Channel numbers come from the kept links (the first MAX_CHANNEL_LINKS); the counts above are whole.
    bounced = [link for link in att.channel_links if link.transport in plain]
    channels = sorted({link.channel for link in bounced if link.channel is not None})
    where = sorted({link.host for link in bounced if link.host})
    named = f"channels {', '.join(f'{c:02d}' for c in channels)}" if channels else "some channels"
    on_hosts = f" on {', '.join(where)}" if where else ""
    return CheckResult(
        id="gdr",
        title=GDR_TITLE,
        verdict=Verdict.WARN,
        evidence=[f"without GDR: {', '.join(f'{t} x{n}' for t, n in sorted(plain.items()))}"]
        + ([f"GDR disabled for: {', '.join(att.gdr_disabled_devices)}"] if att.gdr_disabled_devices else []),
        cause=f"partial GPUDirect RDMA: {named}{on_hosts} carry no /GDRDMA ({without} of {total} network "
        f"links, via {', '.join(sorted(plain))}); their data is staged through host memory",
        fix="check the GPU-NIC PCI distance of those NICs (`nvidia-smi topo -m`: PIX/PXB get GDR, SYS does "
        "not unless NCCL_NET_GDR_LEVEL allows it), nvidia-peermem or DMA-BUF on every NIC, and ACS/IOMMU",
    )


def check_intra_node(ev: Evidence, exp: Expectation) -> CheckResult:
    title = "GPUs of one host talk over NVLink/PCIe, not the network"
    att = ev.attestation
    nvlink = exp.fabric is FabricName.NVLINK
    if att is None or not att.has_nccl_output or not att.channel_links_total:
        if att is None or not att.has_nccl_output:
            return no_log_result("intra-node", title)
        if nvlink and att.nvls:  # `Connected NVLS`: NVLink SHARP needs NVLink (NVSwitch)
            return CheckResult(
                id="intra-node", title=title, verdict=Verdict.PASS, cause="NCCL connected NVLS"
            )
        return CheckResult(
            id="intra-node",
            title=title,
            verdict=Verdict.WARN if nvlink else Verdict.SKIP,
            cause="no channel lines in the log" + (": NVLink is not proven" if nvlink else ""),
            fix="rerun with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT (channel lines name P2P/NVLS)"
            if nvlink
            else "",
        )
    if att.virtual_nodes and not att.intra_host_net_links:
        return CheckResult(
            id="intra-node",
            title=title,
            verdict=Verdict.PASS if att.transport_kinds.get("net") else Verdict.SKIP,
            evidence=[f"virtual nodes: {', '.join(att.virtual_nodes[:8])}"],
            cause=f"virtual nodes on one host ({len(att.virtual_nodes)} NCCL_HOSTID values): their ranks "
            "connect through the network by design, no rank pair of one node does (links: "
            + (links_summary(att) or "none logged")
            + ")",
        )
    if att.intra_host_net_links:
        disabled = [
            k for k in ("NCCL_P2P_DISABLE", "NCCL_SHM_DISABLE") if att.nccl_env.get(k, "0") not in ("0", "")
        ]
        why = f"{' and '.join(disabled)} set" if disabled else "P2P and SHM unavailable between these ranks"
        # The attestation counts (rank, peer) pairs of one host that NET joins, not channel links: say
        # "pairs", and show the network's own channel links apart, each count named for what it counts.
        pairs = att.intra_host_net_links
        total = sum(n for t, n in att.transports.items() if transport_kind(t) == "net")
        return CheckResult(
            id="intra-node",
            title=title,
            verdict=Verdict.FAIL if one_host(ev) else Verdict.WARN,
            cause=f"{pairs} rank pair(s) on one host connect through the network instead of NVLink/PCIe "
            f"({total} network channel link(s) in the log: {links_summary(att, net_only=True)}): {why}",
            fix="unset NCCL_P2P_DISABLE/NCCL_SHM_DISABLE; run a host's ranks in one container/pod with a "
            "shared "
            "IPC namespace (--ipc=host) and enough /dev/shm",
        )
    local = {k: n for k, n in att.transport_kinds.items() if k in ("p2p", "shm", "nvls")}
    if exp.fabric is FabricName.NVLINK and local and "p2p" not in local and "nvls" not in local:
        return CheckResult(
            id="intra-node",
            title=title,
            verdict=Verdict.WARN,
            cause=f"intra-node links use only shared memory ({links_summary(att)}), not NVLink P2P",
            fix="check NCCL_P2P_DISABLE/NCCL_P2P_LEVEL and `nvidia-smi topo -m` (NV# between GPUs)",
        )
    if not local:
        return CheckResult(
            id="intra-node",
            title=title,
            verdict=Verdict.WARN if nvlink else Verdict.SKIP,
            cause="no intra-node links logged" + (": NVLink is not proven" if nvlink else ""),
        )
    shown = ", ".join(f"{kind} x{n}" for kind, n in sorted(local.items()))
    return CheckResult(id="intra-node", title=title, verdict=Verdict.PASS, cause=f"intra-node links: {shown}")
