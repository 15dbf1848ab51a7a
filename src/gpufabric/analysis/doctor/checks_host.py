"""Checks on the host setup as the NCCL log reveals it: errors and warnings, the bootstrap / socket
interface (NCCL_SOCKET_IFNAME), and shared memory (/dev/shm). The node-side twins of the last two live in
``analysis/preflight.py``, which probes the machine itself.
"""

from __future__ import annotations

import re

from gpufabric.analysis.doctor.evidence import Evidence, Expectation
from gpufabric.analysis.doctor.known import harmless_reason
from gpufabric.analysis.doctor.model import CheckResult, Verdict
from gpufabric.results.attestation import MAX_MESSAGES

# Interfaces that cannot carry traffic between hosts, or that belong to a container bridge.
_LOOPBACK = re.compile(r"^lo\d*$")
_BRIDGE = re.compile(r"^(docker\d*|virbr\d*|veth\w*|cni\d*|flannel\.\d+|br-\w+)$")
_SHM_TROUBLE = re.compile(r"/dev/shm|shared memory|shm_open|posix_fallocate|ftruncate", re.IGNORECASE)
_IFNAME_TROUBLE = re.compile(
    r"no socket interface found|No usable listening interface|"
    r"Bootstrap : no socket interface|could not find any interface",
    re.IGNORECASE,
)


def check_nccl_errors(ev: Evidence, exp: Expectation) -> CheckResult:
    title = "NCCL errors and warnings"
    att = ev.attestation
    if att is None or not att.has_nccl_output:
        return CheckResult(id="nccl-errors", title=title, verdict=Verdict.SKIP, cause="no NCCL output")
    known = {m: why for m in att.errors + att.warnings if (why := harmless_reason(m, att, exp))}
    harmless = [f"harmless here: {m} ({why})" for m, why in known.items()]
    errors = [m for m in att.errors if m not in known]
    # The distinct messages are complete below MAX_MESSAGES; past it, unknown ones may hide in the count.
    complete = len(att.errors) < MAX_MESSAGES
    if errors or (att.error_count and not complete):
        first = errors[0] if errors else att.errors[0]
        return CheckResult(
            id="nccl-errors",
            title=title,
            verdict=Verdict.FAIL,
            evidence=errors[:5] + harmless[:2],
            cause=f"{att.error_count} error line(s), first: {first}",
            fix="read the first error: it names the failing call (socket, ibv_*, fi_*, cuda)",
        )
    warnings = [m for m in att.warnings if m not in known]
    if warnings:
        return CheckResult(
            id="nccl-errors",
            title=title,
            verdict=Verdict.WARN,
            evidence=warnings[:5] + harmless[:2],
            cause=f"{att.warning_count} NCCL WARN line(s), first: {warnings[0]}",
            fix="check whether the warning explains a slow or missing transport",
        )
    if known:
        return CheckResult(
            id="nccl-errors",
            title=title,
            verdict=Verdict.PASS,
            evidence=harmless[:5],
            cause=f"only known-harmless messages: {next(iter(known))} ({next(iter(known.values()))})",
        )
    return CheckResult(
        id="nccl-errors", title=title, verdict=Verdict.PASS, cause="no NCCL errors or warnings"
    )


def check_socket_ifname(ev: Evidence, exp: Expectation) -> CheckResult:
    title = "bootstrap / socket interface (NCCL_SOCKET_IFNAME)"
    att = ev.attestation
    if att is None or not att.has_nccl_output:
        return CheckResult(id="socket-ifname", title=title, verdict=Verdict.SKIP, cause="no NCCL output")
    setting = att.nccl_env.get("NCCL_SOCKET_IFNAME")
    shown = f"NCCL_SOCKET_IFNAME={setting}" if setting else "NCCL_SOCKET_IFNAME unset"
    interfaces = list(dict.fromkeys(att.bootstrap_interfaces + att.interfaces))
    evidence = [shown, f"interfaces in use: {', '.join(interfaces) or 'none logged'}"]
    trouble = [m for m in att.errors + att.warnings if _IFNAME_TROUBLE.search(m)]
    if trouble:
        return CheckResult(
            id="socket-ifname",
            title=title,
            verdict=Verdict.FAIL,
            evidence=evidence + trouble[:2],
            cause=f"NCCL found no usable interface ({shown})",
            fix="set NCCL_SOCKET_IFNAME to the interface with the host's routable address "
            "(`ip -br addr`), e.g. eth0 or ens5; a prefix such as 'eth' matches eth0, eth1",
        )
    if not interfaces:
        return CheckResult(
            id="socket-ifname",
            title=title,
            verdict=Verdict.SKIP,
            evidence=evidence,
            cause="the log names no bootstrap or socket interface",
        )
    multi_host = ev.min_nodes > 1  # proven: a partial log's hosts are a lower bound
    loopback = [i for i in interfaces if _LOOPBACK.match(i)]
    if loopback and multi_host:
        return CheckResult(
            id="socket-ifname",
            title=title,
            verdict=Verdict.FAIL,
            evidence=evidence,
            cause=f"NCCL uses loopback ({', '.join(loopback)}) across {ev.nodes_text}: "
            "other hosts cannot reach it (hangs at bootstrap)",
            fix="set NCCL_SOCKET_IFNAME to the inter-node interface, e.g. eth0 (NVIDIA/nccl#913)",
        )
    bridges = [i for i in interfaces if _BRIDGE.match(i)]
    if bridges and multi_host:
        return CheckResult(
            id="socket-ifname",
            title=title,
            verdict=Verdict.WARN,
            evidence=evidence,
            cause=f"NCCL picked container-bridge interface(s) {', '.join(bridges)} ({shown})",
            fix="exclude them: NCCL_SOCKET_IFNAME=^docker,lo,virbr or name the real NIC",
        )
    return CheckResult(
        id="socket-ifname",
        title=title,
        verdict=Verdict.PASS,
        evidence=evidence,
        cause=f"{', '.join(interfaces)} ({shown})" + ("; loopback is fine on one host" if loopback else ""),
    )


def check_shm(ev: Evidence, exp: Expectation) -> CheckResult:
    title = "shared memory (/dev/shm)"
    att = ev.attestation
    if att is None or not att.has_nccl_output:
        return CheckResult(id="shm", title=title, verdict=Verdict.SKIP, cause="no NCCL output")
    trouble = [m for m in att.errors + att.warnings if _SHM_TROUBLE.search(m)]
    if trouble:
        return CheckResult(
            id="shm",
            title=title,
            verdict=Verdict.FAIL,
            evidence=trouble[:3],
            cause=f"NCCL could not allocate shared memory: {trouble[0]}",
            fix="give the container more /dev/shm: docker --shm-size=1g (or --ipc=host), "
            "Kubernetes emptyDir {medium: Memory} on /dev/shm (NVIDIA/nccl#290)",
        )
    return CheckResult(
        id="shm",
        title=title,
        verdict=Verdict.PASS,
        cause="no shared-memory errors in the log (`doctor --preflight` measures /dev/shm itself)",
    )
