"""Preflight: on the node itself, before spending GPU hours, check what the fabric needs.

GPUs visible, RDMA devices (/dev/infiniband, EFA), ``fi_info -p efa``, NCCL net plugins resolvable on
LD_LIBRARY_PATH, nvidia-peermem, memlock, /dev/shm, and the interfaces NCCL_SOCKET_IFNAME names. Each
check SKIPs with its reason when the tool or file it needs is absent. The node is seen through a
``Probe`` (``preflight_probe.py``), so tests stage a fake node and the CLI looks at the real one.
"""

from __future__ import annotations

import glob
import re

from gpufabric.analysis.doctor.evidence import Expectation, resolve_expectation
from gpufabric.analysis.doctor.model import CheckResult, DoctorReport, SubjectReport, Verdict
from gpufabric.analysis.preflight_host import (
    RDMA_FABRICS,
    check_ifnames,
    check_memlock,
    check_peermem,
    check_shm,
    make_result,
)
from gpufabric.analysis.preflight_probe import Probe
from gpufabric.catalog import FabricName

PLUGIN_DIRS = (
    "/opt/amazon/ofi-nccl/lib",
    "/opt/amazon/ofi-nccl/lib64",
    "/opt/aws-ofi-nccl/install/lib",
    "/opt/aws-ofi-nccl/lib",
    "/usr/local/tcpx/lib64",
    "/usr/local/nvidia/lib64",
    "/usr/local/gib/lib64",
    "/opt/hpcx/nccl_rdma_sharp_plugin/lib",
)


def check_gpus(probe: Probe, exp: Expectation, gpus: int | None) -> CheckResult:
    title = "GPUs visible"
    expected = gpus or (exp.instance.accelerator_count if exp.instance else None)
    smi = probe.command("nvidia-smi", "-L")
    if smi is not None and smi.returncode != 0:
        first = (smi.stderr or smi.stdout).strip().splitlines()[:1]
        return make_result(
            "gpus",
            title,
            Verdict.FAIL,
            f"nvidia-smi failed: {first[0] if first else smi.returncode}",
            "check the driver (nvidia-smi on the host) and the container's GPU runtime",
        )
    if smi is not None:
        count, how = sum(1 for line in smi.stdout.splitlines() if line.startswith("GPU ")), "nvidia-smi -L"
        visible = probe.environ.get("CUDA_VISIBLE_DEVICES")
        if visible is not None:
            count, how = (
                min(count, len([v for v in visible.split(",") if v.strip()])),
                how + " + CUDA_VISIBLE_DEVICES",
            )
    elif (entries := probe.listdir("/proc/driver/nvidia/gpus")) is not None:
        count, how = len(entries), "/proc/driver/nvidia/gpus"
    elif (torch_count := probe.torch_gpus()) is not None:
        count, how = torch_count, "torch.cuda.device_count()"
    else:
        nothing = "no nvidia-smi, no /proc/driver/nvidia, no CUDA build of torch"
        if expected:  # a node that must show GPUs and shows no driver at all cannot run the job
            return make_result(
                "gpus",
                title,
                Verdict.FAIL,
                f"{expected} GPU(s) expected, none visible: {nothing} (no NVIDIA driver here?)",
                "run on a GPU node with the NVIDIA driver; in a container use the NVIDIA runtime "
                "(docker --gpus all, Kubernetes nvidia.com/gpu)",
            )
        return make_result("gpus", title, Verdict.SKIP, f"{nothing}; pass --gpus N to require GPUs")
    if expected and count < expected:
        return make_result(
            "gpus",
            title,
            Verdict.FAIL,
            f"{count} GPU(s) visible ({how}), {expected} expected",
            "request all GPUs (nvidia.com/gpu, --gpus all) and check CUDA_VISIBLE_DEVICES",
        )
    if count == 0:
        return make_result(
            "gpus", title, Verdict.FAIL, f"no GPU visible ({how})", "check the GPU runtime/driver"
        )
    return make_result(
        "gpus",
        title,
        Verdict.PASS,
        f"{count} GPU(s) visible ({how})" + (f", {expected} expected" if expected else ""),
    )


def check_rdma_devices(probe: Probe, exp: Expectation) -> CheckResult:
    title = "RDMA devices (/dev/infiniband, EFA)"
    needed = exp.fabric in RDMA_FABRICS
    devices = probe.listdir("/sys/class/infiniband") or []
    uverbs = [d for d in probe.listdir("/dev/infiniband") or [] if d.startswith("uverbs")]
    evidence = [
        f"/sys/class/infiniband: {', '.join(devices) or 'none'}",
        f"/dev/infiniband: {', '.join(uverbs) or 'none'}",
    ]
    if not uverbs:
        if not needed:
            return make_result(
                "rdma-devices",
                title,
                Verdict.SKIP if not devices else Verdict.PASS,
                f"no /dev/infiniband/uverbs* ({exp.fabric or 'no fabric'} expected: not needed)",
                evidence=evidence,
            )
        return make_result(
            "rdma-devices",
            title,
            Verdict.FAIL,
            f"{exp.fabric} needs RDMA devices but /dev/infiniband has no uverbs* "
            + ("(the host has them: not mounted into the container)" if devices else ""),
            "mount them: docker --device=/dev/infiniband --cap-add=IPC_LOCK; Kubernetes: request "
            "vpc.amazonaws.com/efa or rdma/ib (device plugin)",
            evidence=evidence,
        )
    wanted = exp.instance.nic_count if exp.instance and needed and exp.fabric == exp.instance.fabric else None
    if wanted and len(uverbs) < wanted:
        return make_result(
            "rdma-devices",
            title,
            Verdict.WARN,
            f"{len(uverbs)} of {wanted} RDMA devices visible",
            "request every NIC (vpc.amazonaws.com/efa equal to the node's count; private IPs for EFA)",
            evidence=evidence,
        )
    return make_result(
        "rdma-devices",
        title,
        Verdict.PASS,
        f"{len(uverbs)} RDMA device(s): {', '.join(devices)}",
        evidence=evidence,
    )


def check_fi_info(probe: Probe, exp: Expectation) -> CheckResult:
    title = "libfabric sees EFA (fi_info -p efa)"
    if exp.fabric not in (FabricName.EFA, None):
        return make_result("fi-info", title, Verdict.SKIP, f"{exp.fabric} does not use libfabric")
    out = probe.command("fi_info", "-p", "efa")
    if out is None:
        return make_result(
            "fi-info",
            title,
            Verdict.SKIP,
            "fi_info not installed (EFA installer puts it in /opt/amazon/efa/bin)",
        )
    providers = len(re.findall(r"provider:\s*efa", out.stdout))
    if out.returncode == 0 and providers:
        return make_result("fi-info", title, Verdict.PASS, f"fi_info lists {providers} efa endpoint(s)")
    verdict = Verdict.FAIL if exp.fabric is FabricName.EFA else Verdict.SKIP
    return make_result(
        "fi-info",
        title,
        verdict,
        f"fi_info -p efa found no EFA provider (rc {out.returncode})",
        "attach EFA devices and mount /dev/infiniband; check the EFA driver (lsmod | grep efa)",
    )


def _plugin_files(directories: list[str]) -> list[str]:
    return sorted({f for d in directories for f in glob.glob(f"{d}/libnccl-net*.so*")})


def check_plugins(probe: Probe, exp: Expectation) -> CheckResult:
    title = "NCCL net plugin resolvable"
    on_path = [probe.path(d).as_posix() for d in probe.environ.get("LD_LIBRARY_PATH", "").split(":") if d]
    loadable = _plugin_files(on_path)
    elsewhere = [
        f for f in _plugin_files([probe.path(d).as_posix() for d in PLUGIN_DIRS]) if f not in loadable
    ]
    named = probe.environ.get("NCCL_NET_PLUGIN")
    evidence = [
        f"on LD_LIBRARY_PATH: {', '.join(loadable) or 'none'}",
        f"elsewhere: {', '.join(elsewhere) or 'none'}",
    ]
    needs = exp.fabric in (
        FabricName.EFA,
        FabricName.GPUDIRECT_TCPX,
        FabricName.GPUDIRECT_TCPXO,
        FabricName.GPUDIRECT_RDMA,
    )
    if loadable or (named and "/" in named and probe.path(named).is_file()):
        return make_result(
            "net-plugin", title, Verdict.PASS, f"loadable: {', '.join(loadable) or named}", evidence=evidence
        )
    if not needs:
        return make_result(
            "net-plugin",
            title,
            Verdict.PASS if exp.fabric else Verdict.SKIP,
            f"no libnccl-net*.so on LD_LIBRARY_PATH; {exp.fabric or 'this setup'} uses NCCL's "
            "built-in transport",
            evidence=evidence,
        )
    where = f"; found at {', '.join(elsewhere)} but not on LD_LIBRARY_PATH" if elsewhere else ""
    return make_result(
        "net-plugin",
        title,
        Verdict.FAIL,
        f"{exp.fabric} needs a libnccl-net*.so plugin, none is loadable{where}",
        "add the plugin's directory to LD_LIBRARY_PATH (see `gpufabric plan`)",
        evidence=evidence,
    )


def preflight(
    expect: str | None = None,
    gpus: int | None = None,
    instance_type: str | None = None,
    probe: Probe | None = None,
) -> DoctorReport:
    """Every node check; ``probe`` defaults to this machine."""
    probe = probe or Probe()
    exp = resolve_expectation(expect, instance_type)
    checks = [
        check_gpus(probe, exp, gpus),
        check_rdma_devices(probe, exp),
        check_fi_info(probe, exp),
        check_plugins(probe, exp),
        check_peermem(probe, exp),
        check_memlock(probe, exp),
        check_shm(probe, exp),
        check_ifnames(probe, exp),
    ]
    host = (probe.read("/proc/sys/kernel/hostname") or "this node").strip()
    return DoctorReport(
        mode="preflight", subjects=[SubjectReport(subject=host, expectation=exp.source, checks=checks)]
    )
