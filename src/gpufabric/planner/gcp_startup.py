"""Startup script of a GCP GPUDirect VM (Container-Optimized OS): driver, the fabric's NCCL plugin, RxDM.

The plugin installs mirror Google's GKE installer DaemonSets (container-engine-accelerators, commit 992db81):
``/scripts/container_entry.sh install`` with /var/lib mounted, then (TCPXO, gIB) the libraries copied into
the driver's lib64, which the NCCL container mounts. RxDM runs with NET_ADMIN (TCPXO: and NET_BIND_SERVICE)
and the host's /sys and /proc/sys, as Google's GKE manifests run it, never ``--privileged``.
"""

from __future__ import annotations

from gpufabric.catalog import FabricName
from gpufabric.planner.images import GIB_PLUGIN, TCPX_PLUGIN, TCPX_RXDM, TCPXO_PLUGIN, TCPXO_RXDM

GPU_DEVICES = (
    " ".join(f"--device /dev/nvidia{i}" for i in range(8))
    + " --device /dev/nvidiactl --device /dev/nvidia-uvm"
)
# RxDM as Google's GKE manifests run it: NET_ADMIN (TCPXO: and NET_BIND_SERVICE), the host's /sys and
# /proc/sys at the paths RxDM expects, never --privileged (SkyPilot's VM script still uses it).
RXDM_HOST_MOUNTS = "--volume /sys:/hostsysfs --volume /proc/sys:/hostprocsysfs"
# Google's TCPXO installer's pre-installation step (gpudirect-tcpxo/nccl-tcpxo-installer.yaml), on the host.
TCPXO_HOST_SETUP = [
    "iptables -I INPUT -p tcp -m tcp -j ACCEPT && modprobe import-helper",
    "mkdir -p /dev/aperture_devices",
    "lspci -nn -D | grep '1ae0:0084' | while read -r BDF _; do mkdir -p /dev/aperture_devices/$BDF && "
    'mount --bind "$(readlink -f /sys/bus/pci/devices/$BDF)" /dev/aperture_devices/$BDF; done',
    "chmod -R a+r /dev/aperture_devices/ && chmod a+rw /dev/aperture_devices/*/resource*",
]


def _install(image: str, *args: str) -> str:
    """Run a Google installer image's entry script with /var/lib mounted (it writes /var/lib/<plugin>)."""
    return (
        f"docker run --rm --volume /var/lib:/var/lib --entrypoint /scripts/container_entry.sh {image} "
        + " ".join(args)
    )


def startup_script(fabric: FabricName, nics: int) -> str:
    lines = [
        "#!/bin/bash",
        "set -euo pipefail",
        "cos-extensions install gpu -- --version=latest",
        "mount --bind /var/lib/nvidia /var/lib/nvidia && mount -o remount,exec /var/lib/nvidia",
    ]
    if fabric is FabricName.GPUDIRECT_TCPX:
        lines += [
            "docker run --pull=always --rm --detach --name receive-datapath-manager --cap-add=NET_ADMIN "
            f"--network=host {GPU_DEVICES} {RXDM_HOST_MOUNTS} "
            "--volume /var/lib/nvidia/lib64:/usr/local/nvidia/lib64:ro "
            "--volume /run/tcpx:/run/tcpx --env LD_LIBRARY_PATH=/usr/local/nvidia/lib64 "
            f"--entrypoint /tcpgpudmarxd/build/app/tcpgpudmarxd {TCPX_RXDM.ref} --gpu_nic_preset a3vm "
            '--gpu_shmem_type fd --uds_path /run/tcpx --setup_param "--verbose 128 2 0"',
            "iptables -I INPUT -p tcp -m tcp -j ACCEPT",
            _install(TCPX_PLUGIN.ref, "install", "--install-nccl"),
            "mount --bind /var/lib/tcpx /var/lib/tcpx && mount -o remount,exec /var/lib/tcpx",
        ]
    elif fabric is FabricName.GPUDIRECT_TCPXO:
        lines += [
            *TCPXO_HOST_SETUP,
            _install(TCPXO_PLUGIN.ref, "install", "--install-nccl"),
            "cp -r /var/lib/tcpxo/lib64/. /var/lib/nvidia/lib64",
            "docker run --pull=always --rm --detach --name receive-datapath-manager "
            "--cap-add=NET_ADMIN --cap-add=NET_BIND_SERVICE "
            f"--network=host {GPU_DEVICES} --device /dev/dmabuf_import_helper {RXDM_HOST_MOUNTS} "
            "--volume /var/lib/nvidia/lib64:/usr/local/nvidia/lib64:ro "
            "--env LD_LIBRARY_PATH=/usr/local/nvidia/lib64 --entrypoint /fts/entrypoint_rxdm_container.sh "
            f"{TCPXO_RXDM.ref} --num_hops=2 --num_nics={nics} --uid= --alsologtostderr",
        ]
    elif fabric is FabricName.GPUDIRECT_RDMA:
        lines += [
            _install(GIB_PLUGIN.ref, "install"),
            "cp -r /var/lib/gib/lib64/. /var/lib/nvidia/lib64",
        ]
    return "\n".join(lines) + "\n"
