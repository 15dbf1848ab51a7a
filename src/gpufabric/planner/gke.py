"""GKE GPUDirect pieces: multi-network annotations, device annotations, RxDM sidecars and host volumes.

Field for field Google's own manifests (container-engine-accelerators, commit 992db81:
gpudirect-tcpx/nccl-test-latest.yaml, gpudirect-tcpxo/nccl-test-latest.yaml, gpudirect-rdma/nccl-test.yaml;
vendored under tests/fixtures/references/google/), with the deviations docs/planner-references.md lists:
the RxDM socket is a pod-local emptyDir (as SkyPilot), the RDMA pod also gets gVNIC eth1 (as SkyPilot and
Google's AI Hypercomputer guide), NIC names follow the plan's NIC count, every container drops ALL
capabilities and adds back only Google's, and the library mounts are read-only.
"""

from __future__ import annotations

import json
from typing import Any

from gpufabric.catalog import FabricName
from gpufabric.planner.images import TCPX_RXDM, TCPXO_RXDM
from gpufabric.planner.model import Plan
from gpufabric.planner.security import host_volume, least_privilege

GPU_DEVICE_PATHS = [f"/dev/nvidia{i}" for i in range(8)] + ["/dev/nvidiactl", "/dev/nvidia-uvm"]
NVIDIA_LIB64 = "/home/kubernetes/bin/nvidia/lib64"  # where GKE's driver and the plugin installers put libs


def _device_annotation(paths: list[str]) -> str:
    return "".join(f"- path: {p}\n" for p in paths)


def _interfaces(fabric: FabricName, nics: int) -> list[dict[str, str]]:
    interfaces = [{"interfaceName": "eth0", "network": "default"}]
    if fabric is FabricName.GPUDIRECT_RDMA:
        interfaces.append({"interfaceName": "eth1", "network": "gvnic-1"})
        interfaces += [{"interfaceName": f"eth{i + 2}", "network": f"rdma-{i}"} for i in range(nics)]
    else:
        interfaces += [{"interfaceName": f"eth{i}", "network": f"vpc{i}"} for i in range(1, nics + 1)]
    return interfaces


def _rxdm_host_mounts(plan: Plan, daemon: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(volumes, daemon mounts) of /sys and /proc/sys, writable as in Google's manifests, each listed."""
    volumes, mounts = [], []
    for name, path, mount in (("sys", "/sys", "/hostsysfs"), ("proc-sys", "/proc/sys", "/hostprocsysfs")):
        volume, volume_mount = host_volume(
            plan,
            daemon,
            name,
            path,
            mount,
            read_only=False,
            why="RxDM reads the data NICs' PCI topology and sets their receive queues and sysctls "
            "(Google's manifests mount it writable)",
        )
        volumes.append(volume)
        mounts.append(volume_mount)
    return volumes, mounts


def _libraries(
    plan: Plan, where: str, *, path: str = NVIDIA_LIB64, mount: str = "/usr/local/nvidia/lib64"
) -> tuple[dict[str, Any], dict[str, Any]]:
    return host_volume(
        plan,
        where,
        "libraries",
        path,
        mount,
        read_only=True,
        why="the node's NVIDIA driver libraries and the NCCL plugin its installer DaemonSet copied there",
    )


def _tcpx(plan: Plan, annotations: dict[str, str]) -> tuple[list[Any], list[Any], list[Any], dict[str, str]]:
    annotations["devices.gke.io/container.tcpx-daemon"] = _device_annotation(GPU_DEVICE_PATHS)
    sys_volumes, sys_mounts = _rxdm_host_mounts(plan, "tcpx-daemon")
    libraries, daemon_libs = _libraries(plan, "tcpx-daemon")
    _, main_libs = _libraries(plan, "main")
    daemon = {
        "name": "tcpx-daemon",
        "image": TCPX_RXDM.ref,
        "command": [
            "/tcpgpudmarxd/build/app/tcpgpudmarxd",
            "--gpu_nic_preset",
            "a3vm",
            "--gpu_shmem_type",
            "fd",
            "--uds_path",
            "/run/tcpx",
            "--setup_param",
            "--verbose 128 2 0",
        ],
        "securityContext": least_privilege(
            plan,
            "tcpx-daemon",
            {"NET_ADMIN": "RxDM programs flow steering on the 4 data NICs (Google, SkyPilot: only this)"},
        ),
        "env": [{"name": "LD_LIBRARY_PATH", "value": "/usr/local/nvidia/lib64"}],
        "volumeMounts": [daemon_libs, {"name": "tcpx-socket", "mountPath": "/run/tcpx"}, *sys_mounts],
    }
    volumes = [libraries, {"name": "tcpx-socket", "emptyDir": {}}, *sys_volumes]
    mounts = [main_libs, {"name": "tcpx-socket", "mountPath": "/tmp"}]
    env = {"LD_LIBRARY_PATH": "/usr/local/nvidia/lib64", "NCCL_GPUDIRECTTCPX_UNIX_CLIENT_PREFIX": "/tmp"}
    return [daemon], volumes, mounts, env


def _tcpxo(plan: Plan, annotations: dict[str, str]) -> tuple[list[Any], list[Any], list[Any], dict[str, str]]:
    annotations["devices.gke.io/container.tcpxo-daemon"] = _device_annotation(
        [*GPU_DEVICE_PATHS, "/dev/dmabuf_import_helper"]
    )
    sys_volumes, sys_mounts = _rxdm_host_mounts(plan, "tcpxo-daemon")
    libraries, daemon_libs = _libraries(plan, "tcpxo-daemon")
    _, main_libs = _libraries(plan, "main")
    aperture, aperture_mount = host_volume(
        plan,
        "main",
        "aperture-devices",
        "/dev/aperture_devices",
        "/dev/aperture_devices",
        read_only=False,
        why="the FasTrak plugin maps the NICs' LLCM aperture (PCI resource files the installer bind-mounts)",
    )
    daemon = {
        "name": "tcpxo-daemon",
        "image": TCPXO_RXDM.ref,
        "command": ["/bin/sh", "-c"],
        "args": [
            "set -ex\nchmod 755 /fts/entrypoint_rxdm_container.sh\n"
            f"/fts/entrypoint_rxdm_container.sh --num_hops=2 --num_nics={plan.nic_count} --uid= "
            "--alsologtostderr\n"
        ],
        "securityContext": least_privilege(
            plan,
            "tcpxo-daemon",
            {
                "NET_ADMIN": "RxDM configures the 8 data NICs",
                "NET_BIND_SERVICE": "RxDM binds its control port (Google grants both, not privileged)",
            },
        ),
        "env": [{"name": "LD_LIBRARY_PATH", "value": "/usr/local/nvidia/lib64"}],
        "volumeMounts": [daemon_libs, *sys_mounts],
    }
    return [daemon], [libraries, aperture, *sys_volumes], [main_libs, aperture_mount], {}


def _rdma(plan: Plan) -> tuple[list[Any], list[Any], list[Any], dict[str, str]]:
    nvidia, nvidia_mount = host_volume(
        plan,
        "main",
        "library-dir-host",
        "/home/kubernetes/bin/nvidia",
        "/usr/local/nvidia",
        read_only=True,
        why="the node's NVIDIA driver and the gIB NCCL plugin the installer DaemonSet copied to lib64",
    )
    gib, gib_mount = host_volume(
        plan,
        "main",
        "gib",
        "/home/kubernetes/bin/gib",
        "/usr/local/gib",
        read_only=True,
        why="gIB's tuner configs and set_nccl_env.sh (NCCL_TUNER_CONFIG_PATH points there)",
    )
    return [], [nvidia, gib], [nvidia_mount, gib_mount], {}


def gke_parts(
    plan: Plan,
) -> tuple[dict[str, str], list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]], dict[str, str]]:
    """(annotations, sidecars, volumes, main volumeMounts, env overrides) for the plan's GKE fabric."""
    annotations = {
        "networking.gke.io/default-interface": "eth0",
        "networking.gke.io/interfaces": json.dumps(_interfaces(plan.fabric, plan.nic_count)),
    }
    if plan.fabric is FabricName.GPUDIRECT_TCPX:
        sidecars, volumes, mounts, env = _tcpx(plan, annotations)
    elif plan.fabric is FabricName.GPUDIRECT_TCPXO:
        sidecars, volumes, mounts, env = _tcpxo(plan, annotations)
    else:
        sidecars, volumes, mounts, env = _rdma(plan)
    return annotations, sidecars, volumes, mounts, env


def main_capabilities(fabric: FabricName) -> dict[str, str]:
    """Capabilities Google's manifests give the NCCL container: IPC_LOCK on TCPX only, none on TCPXO/RDMA."""
    if fabric is FabricName.GPUDIRECT_TCPX:
        return {
            "IPC_LOCK": "the TCPX plugin locks (mlock) the host buffers it shares with RxDM; Google's TCPX "
            "nccl-test grants it (TCPX moves data over TCP, no verbs)"
        }
    return {}


def gke_prerequisites(fabric: FabricName, nics: int) -> list[str]:
    if fabric is FabricName.GPUDIRECT_RDMA:
        nets = "gvnic-1 and rdma-0..rdma-" + str(nics - 1)
        installer = (
            "the gIB NCCL plugin installer DaemonSet (Google's gpudirect-rdma/nccl-rdma-installer.yaml)"
        )
    else:
        nets = f"vpc1..vpc{nics}"
        kind = "tcpx" if fabric is FabricName.GPUDIRECT_TCPX else "tcpxo"
        installer = (
            f"the {kind.upper()} NCCL plugin installer DaemonSet (Google's gpudirect-{kind}/"
            f"nccl-{kind}-installer.yaml) and the NRI device injector"
        )
    return [
        f"GKE multi-networking enabled with Network/GKENetworkParamSet objects {nets}",
        f"{installer} running on the node pool",
        "the node pool uses compact placement and the A3/A4 machine type of this plan",
    ]


__all__ = ["gke_parts", "gke_prerequisites", "main_capabilities"]
