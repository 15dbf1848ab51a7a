"""Preflight checks of the host setup RDMA and NCCL's transports rely on: nvidia-peermem, the locked-memory
limit, /dev/shm, and the interfaces NCCL_SOCKET_IFNAME (and the TCPX/TCPXO equivalents) name. Device and
plugin checks, and the ``preflight`` entry point, are in ``preflight.py``.
"""

from __future__ import annotations

import re

from gpufabric.analysis.doctor.evidence import Expectation
from gpufabric.analysis.doctor.model import CheckResult, Verdict
from gpufabric.analysis.preflight_probe import Probe
from gpufabric.catalog import FabricName

RDMA_FABRICS = frozenset({FabricName.EFA, FabricName.INFINIBAND, FabricName.ROCE, FabricName.GPUDIRECT_RDMA})
SHM_FAIL_BYTES = 256 << 20  # docker's default 64 MB fails NCCL's SHM transport with a few GPUs
SHM_WARN_BYTES = 1 << 30  # SkyPilot and GKE examples give 1 GiB and more
MEMLOCK_FAIL_BYTES = 1 << 30
IFNAME_VARS = ("NCCL_SOCKET_IFNAME", "NCCL_GPUDIRECTTCPX_SOCKET_IFNAME", "NCCL_FASTRAK_IFNAME")


def make_result(
    check_id: str, title: str, verdict: Verdict, cause: str, fix: str = "", evidence: list[str] | None = None
) -> CheckResult:
    return CheckResult(
        id=check_id, title=title, verdict=verdict, cause=cause, fix=fix, evidence=evidence or []
    )


def check_peermem(probe: Probe, exp: Expectation) -> CheckResult:
    title = "nvidia-peermem (GPUDirect RDMA)"
    modules = probe.read("/proc/modules")
    if modules is None:
        return make_result("peermem", title, Verdict.SKIP, "/proc/modules unreadable")
    loaded = re.search(r"^(nvidia_peermem|nv_peer_mem)\s", modules, re.MULTILINE)
    if loaded:
        return make_result("peermem", title, Verdict.PASS, f"{loaded.group(1)} loaded")
    if exp.fabric in RDMA_FABRICS:
        return make_result(
            "peermem",
            title,
            Verdict.WARN,
            "nvidia-peermem is not loaded: GPUDirect RDMA needs it or DMA-BUF",
            "modprobe nvidia-peermem on the host (or rely on DMA-BUF: kernel >= 5.12, open GPU driver)",
        )
    return make_result(
        "peermem", title, Verdict.SKIP, f"not loaded; {exp.fabric or 'no RDMA fabric'} expected, not needed"
    )


def check_memlock(probe: Probe, exp: Expectation) -> CheckResult:
    title = "locked-memory limit (ulimit -l)"
    limits = probe.read("/proc/self/limits")
    match = re.search(r"^Max locked memory\s+(\S+)", limits or "", re.MULTILINE)
    if not match:
        return make_result("memlock", title, Verdict.SKIP, "/proc/self/limits unreadable")
    soft = match.group(1)
    if soft == "unlimited":
        return make_result("memlock", title, Verdict.PASS, "memlock unlimited")
    size = int(soft)
    if exp.fabric not in RDMA_FABRICS:
        return make_result(
            "memlock", title, Verdict.PASS, f"memlock {size >> 20} MiB (no RDMA fabric expected)"
        )
    verdict = Verdict.FAIL if size < MEMLOCK_FAIL_BYTES else Verdict.WARN
    return make_result(
        "memlock",
        title,
        verdict,
        f"memlock {size >> 20} MiB: RDMA memory registration can fail",
        "docker --ulimit memlock=-1:-1 (and --cap-add=IPC_LOCK); /etc/security/limits.conf memlock unlimited",
    )


def check_shm(probe: Probe, exp: Expectation) -> CheckResult:
    title = "/dev/shm size"
    shm = probe.path("/dev/shm")
    total = probe.disk_total(shm) if shm.is_dir() else None
    if total is None:
        return make_result(
            "shm",
            title,
            Verdict.FAIL,
            "/dev/shm is missing: NCCL's SHM transport cannot work",
            "mount a tmpfs on /dev/shm (docker --shm-size=1g, Kubernetes emptyDir medium: Memory)",
        )
    size = f"{total / (1 << 30):.2f} GiB"
    if total < SHM_WARN_BYTES:
        return make_result(
            "shm",
            title,
            Verdict.FAIL if total < SHM_FAIL_BYTES else Verdict.WARN,
            f"/dev/shm is {size}: NCCL needs more with several GPUs (NVIDIA/nccl#290)",
            "docker --shm-size=1g or --ipc=host; Kubernetes emptyDir {medium: Memory} on /dev/shm",
        )
    return make_result("shm", title, Verdict.PASS, f"/dev/shm is {size}")


# Interfaces other hosts cannot reach: loopback, and this host's virtual plumbing (container bridges and
# veths, ifb traffic shapers, dummies, tunnels). NCCL can select them; a multi-node job then hangs.
_HOST_ONLY_IFACE = re.compile(r"^(lo|docker|virbr|veth|br-|cni|flannel|ifb|dummy|tunl|sit|ip6tnl|kube-)")


def nccl_selects(setting: str, interfaces: list[str]) -> list[str]:
    """The interfaces NCCL considers under an IFNAME value, by NCCL's own rules (its socket code and the
    NCCL_SOCKET_IFNAME docs): comma-separated prefixes; a leading ``^`` excludes what the list matches
    instead of selecting it; a leading ``=`` (after any ``^``) makes every entry an exact name. A
    ``:port`` suffix on an entry is not part of the name."""
    exclude = setting.startswith("^")
    rest = setting[1:] if exclude else setting
    exact = rest.startswith("=")
    rest = rest[1:] if exact else rest
    entries = [e.split(":", 1)[0].strip() for e in rest.split(",") if e.strip()]

    def listed(name: str) -> bool:
        return any(name == e if exact else name.startswith(e) for e in entries)

    return [i for i in interfaces if listed(i) != exclude]


def check_ifnames(probe: Probe, exp: Expectation) -> CheckResult:
    title = "interfaces NCCL_SOCKET_IFNAME selects are usable"
    interfaces = probe.listdir("/sys/class/net")
    if interfaces is None:
        return make_result("socket-ifname", title, Verdict.SKIP, "/sys/class/net unreadable")
    settings = {var: probe.environ[var] for var in IFNAME_VARS if probe.environ.get(var)}
    available = f"interfaces here: {', '.join(interfaces)}"
    fix = (
        "name the interface with this host's routable address (`ip -br addr`): a prefix ('eth' matches "
        "eth0, eth1), '=eth0' for exact names, '^docker,lo' to exclude"
    )
    if not settings:
        if interfaces and all(_HOST_ONLY_IFACE.match(i) for i in interfaces):
            return make_result(
                "socket-ifname",
                title,
                Verdict.WARN,
                f"NCCL_SOCKET_IFNAME unset and only loopback/virtual interfaces exist ({available}): "
                "other hosts cannot reach this node",
                "attach the node's network interface (a multi-node job needs one); one host is fine",
            )
        return make_result(
            "socket-ifname",
            title,
            Verdict.PASS,
            "NCCL_SOCKET_IFNAME unset: NCCL picks an interface itself (ib* first, never lo/docker*); "
            + available,
        )
    shown = ", ".join(f"{k}={v}" for k, v in settings.items())
    selected = {var: nccl_selects(value, interfaces) for var, value in settings.items()}
    evidence = [shown] + [f"{var} selects: {', '.join(s) or 'nothing'}" for var, s in selected.items()]
    empty = [var for var, chosen in selected.items() if not chosen]
    if empty:
        what = "; ".join(
            f"{var}={settings[var]!r} "
            + ("excludes every interface" if settings[var].startswith("^") else "matches no interface")
            for var in empty
        )
        return make_result(
            "socket-ifname", title, Verdict.FAIL, f"{what} ({available})", fix, evidence=evidence
        )
    host_only = [var for var, chosen in selected.items() if all(_HOST_ONLY_IFACE.match(i) for i in chosen)]
    if host_only:
        what = "; ".join(
            f"{var}={settings[var]!r} leaves only {', '.join(selected[var])}" for var in host_only
        )
        return make_result(
            "socket-ifname",
            title,
            Verdict.WARN,
            f"{what}: loopback/virtual interfaces other hosts cannot reach ({available})",
            fix,
            evidence=evidence,
        )
    chosen = "; ".join(f"{var} selects {', '.join(i)}" for var, i in selected.items())
    return make_result("socket-ifname", title, Verdict.PASS, f"{chosen} ({available})", evidence=evidence)
