"""GKE GPUDirect pieces: multi-network annotations, device annotations, RxDM sidecars and host volumes.

TCPX (a3-highgpu/edgegpu): eth0 default + eth1-4 on vpc1-4, the ``tcpx-daemon`` sidecar; TCPXO
(a3-megagpu): eth1-8 on vpc1-8, the ``tcpxo-daemon`` sidecar; GPUDirect-RDMA (a3-ultragpu, a4): eth1 on
gvnic-1 and eth2-9 on rdma-0..7, no sidecar. NIC names come from the plan's NIC count, never hard-coded
to 8 (a SkyPilot gap). Facts: reference sheet section 4 and Google's GKE GPUDirect guides.
"""

from __future__ import annotations

import json
from typing import Any

from gpufabric.catalog import FabricName
from gpufabric.planner.gcp_vm import TCPX_RXDM_IMAGE, TCPXO_RXDM_IMAGE
from gpufabric.planner.model import Plan, Privilege

GPU_DEVICE_PATHS = [f"/dev/nvidia{i}" for i in range(8)] + ["/dev/nvidiactl", "/dev/nvidia-uvm"]


def _device_annotation(paths: list[str]) -> str:
    return "".join(f"- path: {p}\n" for p in paths)


def _host(name: str, path: str) -> dict[str, Any]:
    return {"name": name, "hostPath": {"path": path}}


def gke_parts(
    plan: Plan,
) -> tuple[dict[str, str], list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]], dict[str, str]]:
    """(annotations, sidecars, volumes, main volumeMounts, env overrides) for the plan's GKE fabric."""
    nics, fabric = plan.nic_count, plan.fabric
    interfaces = [{"interfaceName": "eth0", "network": "default"}]
    if fabric is FabricName.GPUDIRECT_RDMA:
        interfaces.append({"interfaceName": "eth1", "network": "gvnic-1"})
        interfaces += [{"interfaceName": f"eth{i + 2}", "network": f"rdma-{i}"} for i in range(nics)]
    else:
        interfaces += [{"interfaceName": f"eth{i}", "network": f"vpc{i}"} for i in range(1, nics + 1)]
    annotations = {
        "networking.gke.io/default-interface": "eth0",
        "networking.gke.io/interfaces": json.dumps(interfaces),
    }
    sys_mounts = [
        {"name": "sys", "mountPath": "/hostsysfs"},
        {"name": "proc-sys", "mountPath": "/hostprocsysfs"},
    ]
    sys_volumes = [_host("sys", "/sys"), _host("proc-sys", "/proc/sys")]
    if fabric is FabricName.GPUDIRECT_TCPX:
        annotations["devices.gke.io/container.tcpx-daemon"] = _device_annotation(GPU_DEVICE_PATHS)
        daemon = {
            "name": "tcpx-daemon",
            "image": TCPX_RXDM_IMAGE,
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
            "securityContext": {"privileged": True},
            "env": [{"name": "LD_LIBRARY_PATH", "value": "/usr/local/nvidia/lib64"}],
            "volumeMounts": [
                {"name": "libraries", "mountPath": "/usr/local/nvidia/lib64"},
                {"name": "tcpx-socket", "mountPath": "/run/tcpx"},
                *sys_mounts,
            ],
        }
        plan.privileges.append(
            Privilege(
                where="tcpx-daemon",
                grant="privileged",
                why="RxDM programs flow steering on the 4 data NICs and maps GPU memory for receive "
                "(Google's GKE TCPX guide runs it privileged)",
            )
        )
        volumes = [
            _host("libraries", "/home/kubernetes/bin/nvidia/lib64"),
            {"name": "tcpx-socket", "emptyDir": {}},
            *sys_volumes,
        ]
        mounts = [
            {"name": "libraries", "mountPath": "/usr/local/nvidia/lib64"},
            {"name": "tcpx-socket", "mountPath": "/tmp"},
        ]
        env = {"LD_LIBRARY_PATH": "/usr/local/nvidia/lib64", "NCCL_GPUDIRECTTCPX_UNIX_CLIENT_PREFIX": "/tmp"}
        return annotations, [daemon], volumes, mounts, env
    if fabric is FabricName.GPUDIRECT_TCPXO:
        annotations["devices.gke.io/container.tcpxo-daemon"] = _device_annotation(
            [*GPU_DEVICE_PATHS, "/dev/dmabuf_import_helper"]
        )
        daemon = {
            "name": "tcpxo-daemon",
            "image": TCPXO_RXDM_IMAGE,
            "command": [
                "/bin/sh",
                "-c",
                f"/fts/entrypoint_rxdm_container.sh --num_hops=2 --num_nics={nics} --uid= --alsologtostderr",
            ],
            "securityContext": {"capabilities": {"add": ["NET_ADMIN", "NET_BIND_SERVICE"]}},
            "env": [{"name": "LD_LIBRARY_PATH", "value": "/usr/local/nvidia/lib64"}],
            "volumeMounts": [{"name": "libraries", "mountPath": "/usr/local/nvidia"}, *sys_mounts],
        }
        plan.privileges.append(
            Privilege(
                where="tcpxo-daemon",
                grant="capabilities NET_ADMIN, NET_BIND_SERVICE",
                why="RxDM configures the 8 data NICs and binds its control port (not privileged)",
            )
        )
        volumes = [
            _host("libraries", "/home/kubernetes/bin/nvidia"),
            _host("aperture-devices", "/dev/aperture_devices"),
            *sys_volumes,
        ]
        mounts = [
            {"name": "libraries", "mountPath": "/usr/local/nvidia"},
            {"name": "aperture-devices", "mountPath": "/dev/aperture_devices"},
        ]
        return annotations, [daemon], volumes, mounts, {}
    volumes = [
        _host("library-dir-host", "/home/kubernetes/bin/nvidia"),
        _host("gib", "/home/kubernetes/bin/gib"),
    ]
    mounts = [
        {"name": "library-dir-host", "mountPath": "/usr/local/nvidia"},
        {"name": "gib", "mountPath": "/usr/local/gib"},
    ]
    return annotations, [], volumes, mounts, {}


def gke_prerequisites(fabric: FabricName, nics: int) -> list[str]:
    if fabric is FabricName.GPUDIRECT_RDMA:
        nets = "gvnic-1 and rdma-0..rdma-" + str(nics - 1)
        installer = (
            "the gIB NCCL plugin installer DaemonSet (Google's gpudirect-rdma nccl-rdma-installer.yaml)"
        )
    else:
        nets = f"vpc1..vpc{nics}"
        kind = "tcpx" if fabric is FabricName.GPUDIRECT_TCPX else "tcpxo"
        installer = f"the {kind.upper()} NCCL plugin installer DaemonSet and the NRI device injector"
    return [
        f"GKE multi-networking enabled with Network/GKENetworkParamSet objects {nets}",
        f"{installer} running on the node pool",
        "the node pool uses compact placement and the A3/A4 machine type of this plan",
    ]
