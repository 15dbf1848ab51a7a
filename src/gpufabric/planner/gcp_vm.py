"""GCP VM rendering: VPCs (MTU 8244), subnets, firewalls, gVNIC/MRDMA NICs, compact placement, startup.

Bodies are Compute Engine REST JSON (camelCase); the tests parse each with google-cloud-compute's message
types (``Network.from_json`` ...), which reject unknown fields. TCPX (a3-highgpu/edgegpu): 1 mgmt + 4 data
VPCs, as SkyPilot; beyond SkyPilot, TCPXO (a3-megagpu: 1 + 8) and GPUDirect-RDMA VMs (a3-ultragpu, a4:
2 gVNIC VPCs + one RoCE VPC with the zone's RDMA network profile and 8 MRDMA NICs). Every gVNIC VPC
admits its own subnet's traffic; ssh comes only from ``${SSH_CIDR}``, only on the management VPC. The
startup script installs each fabric's NCCL plugin with Google's installer image (TCPX, FasTrak for
TCPXO, gIB) and starts RxDM with NET_ADMIN, not --privileged; the plan carries the NCCL container's
``docker run`` options on COS (no ``--gpus``).
"""

from __future__ import annotations

from typing import Any

from gpufabric.catalog import FabricName
from gpufabric.planner.gcp_startup import startup_script
from gpufabric.planner.images import COS_GPU_DOCKER_OPTIONS
from gpufabric.planner.model import Plan, Privilege

MTU = 8244
# The NCCL container's own options beyond COS's GPU mounts (images.COS_GPU_DOCKER_OPTIONS), per fabric.
TCPX_DOCKER_OPTIONS = [
    "--cap-add=IPC_LOCK",
    "--userns=host",
    "--shm-size=1g",
    "--ulimit",
    "memlock=-1",
    "--ulimit",
    "stack=67108864",
    "--volume=/run/tcpx:/run/tcpx",
    "--volume=/var/lib/tcpx/lib64:/usr/local/tcpx/lib64:ro",
]
TCPXO_DOCKER_OPTIONS = [
    "--shm-size=1g",
    "--device=/dev/dmabuf_import_helper",
    "--volume=/dev/aperture_devices:/dev/aperture_devices",
]
RDMA_DOCKER_OPTIONS = [
    "--cap-add=IPC_LOCK",
    "--ulimit",
    "memlock=-1:-1",
    "--shm-size=16g",
    "--device=/dev/infiniband",
    "--volume=/var/lib/gib:/usr/local/gib:ro",
]


def _network(name: str, mtu: int = MTU, profile: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "name": name,
        "mtu": mtu,
        "autoCreateSubnetworks": False,
        "routingConfig": {"routingMode": "GLOBAL"},
    }
    if profile:
        body["networkProfile"] = profile
    return body


def _net_url(vpc: str) -> str:
    return f"projects/${{PROJECT}}/global/networks/{vpc}"


def _subnet(vpc: str, cidr: str) -> dict[str, Any]:
    return {"name": f"{vpc}-sub", "network": _net_url(vpc), "ipCidrRange": cidr, "region": "${REGION}"}


def _firewalls(vpc: str, cidrs: list[str], management: bool) -> list[dict[str, Any]]:
    """Ingress for one VPC: all traffic from the cluster's own subnets of that VPC; on the management VPC
    only, ssh from the operator's network (``${SSH_CIDR}``). A data VPC carries NCCL between the nodes and
    nothing else, so it opens nothing beyond its subnets (SkyPilot opens ssh and icmp to 0.0.0.0/0 on
    every VPC it creates)."""
    rule = {"network": _net_url(vpc), "direction": "INGRESS"}
    rules: list[dict[str, Any]] = [
        {
            "name": f"{vpc}-internal",
            **rule,
            "sourceRanges": cidrs,
            "allowed": [
                {"IPProtocol": "tcp", "ports": ["0-65535"]},
                {"IPProtocol": "udp", "ports": ["0-65535"]},
                {"IPProtocol": "icmp"},
            ],
        }
    ]
    if management:
        rules.append(
            {
                "name": f"{vpc}-allow-ssh",
                **rule,
                "sourceRanges": ["${SSH_CIDR}"],
                "allowed": [{"IPProtocol": "tcp", "ports": ["22"]}],
            }
        )
    return rules


def _nccl_container(plan: Plan) -> None:
    """``docker run`` options of the NCCL container on COS, and the privileges they grant with the reason."""
    fabric = plan.fabric
    extra = {
        FabricName.GPUDIRECT_TCPX: TCPX_DOCKER_OPTIONS,
        FabricName.GPUDIRECT_TCPXO: TCPXO_DOCKER_OPTIONS,
        FabricName.GPUDIRECT_RDMA: RDMA_DOCKER_OPTIONS,
    }.get(fabric, [])
    plan.docker_options = ["--network=host", *COS_GPU_DOCKER_OPTIONS, *extra]
    plan.privileges += [
        Privilege(
            where="docker run",
            grant="--network=host",
            why="the fabric's data NICs exist only in the host network namespace",
        ),
        Privilege(
            where="docker run",
            grant="/dev/nvidia0-7, /dev/nvidiactl, /dev/nvidia-uvm; /var/lib/nvidia lib64, bin (read-only)",
            why="COS has no NVIDIA container toolkit (no --gpus): the GPUs and driver are passed by hand",
        ),
    ]
    if fabric is FabricName.GPUDIRECT_TCPX:
        plan.privileges += [
            Privilege(
                where="docker run",
                grant="capability IPC_LOCK, --userns=host and memlock=-1",
                why="the TCPX plugin locks the host buffers it shares with RxDM (SkyPilot's TCPX options)",
            ),
            Privilege(
                where="docker run",
                grant="/run/tcpx (read-write), /var/lib/tcpx/lib64 (read-only)",
                why="RxDM's socket directory, and the TCPX plugin the startup script installed",
            ),
        ]
    elif fabric is FabricName.GPUDIRECT_TCPXO:
        plan.privileges.append(
            Privilege(
                where="docker run",
                grant="/dev/dmabuf_import_helper, /dev/aperture_devices (read-write)",
                why="FasTrak imports GPU buffers and maps the NICs' LLCM aperture",
            )
        )
    elif fabric is FabricName.GPUDIRECT_RDMA:
        plan.privileges += [
            Privilege(
                where="docker run",
                grant="capability IPC_LOCK, memlock=-1 and /dev/infiniband",
                why="RDMA verbs on the MRDMA NICs register (pin) GPU and host memory",
            ),
            Privilege(
                where="docker run",
                grant="/var/lib/gib at /usr/local/gib (read-only)",
                why="gIB's tuner configs (NCCL_TUNER_CONFIG_PATH); its lib64 is copied into the driver's",
            ),
        ]


def render_gcp_vm(plan: Plan) -> None:
    assert plan.instance is not None
    name, fabric, nics = plan.request.cluster_name, plan.fabric, plan.nic_count
    networks: list[dict[str, Any]] = []
    subnets: list[dict[str, Any]] = []
    nic_bodies: list[dict[str, Any]] = []
    if fabric is FabricName.GPUDIRECT_RDMA:
        vpcs = [f"{name}-gvnic-net-{i}" for i in range(1, plan.instance.extra_nics + 1)]
        networks += [_network(v) for v in vpcs]
        subnets += [_subnet(v, f"10.129.{i}.0/24") for i, v in enumerate(vpcs)]
        roce = f"{name}-roce-net"
        networks.append(_network(roce, profile="projects/${PROJECT}/global/networkProfiles/${ZONE}-vpc-roce"))
        roce_subnets = [{**_subnet(roce, f"10.130.{i}.0/24"), "name": f"{roce}-sub-{i}"} for i in range(nics)]
        subnets += roce_subnets
        nic_bodies += [
            {
                "network": _net_url(v),
                "subnetwork": f"regions/${{REGION}}/subnetworks/{v}-sub",
                "nicType": "GVNIC",
            }
            for v in vpcs
        ]
        nic_bodies += [
            {
                "network": _net_url(roce),
                "subnetwork": f"regions/${{REGION}}/subnetworks/{s['name']}",
                "nicType": "MRDMA",
            }
            for s in roce_subnets
        ]
        firewalls = [
            rule for i, v in enumerate(vpcs) for rule in _firewalls(v, [subnets[i]["ipCidrRange"]], i == 0)
        ]
    else:
        data = nics if fabric in (FabricName.GPUDIRECT_TCPX, FabricName.GPUDIRECT_TCPXO) else 0
        vpcs = [f"{name}-mgmt-net"] + [f"{name}-data-net-{i}" for i in range(1, data + 1)]
        networks += [_network(v) for v in vpcs]
        subnets += [_subnet(v, f"10.129.{i}.0/24") for i, v in enumerate(vpcs)]
        nic_bodies += [
            {
                "network": _net_url(v),
                "subnetwork": f"regions/${{REGION}}/subnetworks/{v}-sub",
                "nicType": "GVNIC",
            }
            for v in vpcs
        ]
        firewalls = [
            rule for i, v in enumerate(vpcs) for rule in _firewalls(v, [subnets[i]["ipCidrRange"]], i == 0)
        ]
    nic_bodies[0]["accessConfigs"] = [{"name": "external-nat", "type": "ONE_TO_ONE_NAT"}]
    policy = f"{name}-placement"
    plan.documents["compute.networks"] = networks
    plan.documents["compute.subnetworks"] = subnets
    plan.documents["compute.firewalls"] = firewalls
    plan.documents["compute.resourcePolicies"] = [
        {
            "name": policy,
            "region": "${REGION}",
            "groupPlacementPolicy": {"collocation": "COLLOCATED", "vmCount": plan.nodes},
        }
    ]
    plan.documents["compute.instances"] = [
        {
            "name": f"{name}-{rank}",
            "machineType": f"zones/${{ZONE}}/machineTypes/{plan.instance.name}",
            "networkInterfaces": nic_bodies,
            "resourcePolicies": [f"projects/${{PROJECT}}/regions/${{REGION}}/resourcePolicies/{policy}"],
            "scheduling": {"onHostMaintenance": "TERMINATE", "automaticRestart": True},
            "disks": [
                {
                    "boot": True,
                    "autoDelete": True,
                    "initializeParams": {
                        "sourceImage": "projects/cos-cloud/global/images/family/cos-stable",
                        "diskSizeGb": "256",
                    },
                }
            ],
            "metadata": {"items": [{"key": "startup-script", "value": startup_script(fabric, nics)}]},
        }
        for rank in range(plan.nodes)
    ]
    plan.parameters.update(
        {
            "PROJECT": "GCP project id",
            "REGION": "region of the zone",
            "ZONE": "zone with A3/A4 capacity",
            "SSH_CIDR": "the network you reach the nodes from (e.g. your VPN's CIDR), never 0.0.0.0/0",
        }
    )
    plan.prerequisites.append(
        f"create, in order: {len(networks)} networks, their subnets, firewalls, "
        "the placement policy, then the instances"
    )
    plan.prerequisites.append("delete the placement policy with the cluster (SkyPilot leaves it behind)")
    if fabric is FabricName.GPUDIRECT_RDMA:
        plan.prerequisites.append(
            "the zone offers the RoCE network profile ${ZONE}-vpc-roce (A3 Ultra / A4 zones)"
        )
    if fabric in (FabricName.GPUDIRECT_TCPX, FabricName.GPUDIRECT_TCPXO):
        plan.prerequisites.append(
            "the RxDM container is running on every node before NCCL starts (startup script)"
        )
    if fabric in (FabricName.GPUDIRECT_TCPX, FabricName.GPUDIRECT_TCPXO, FabricName.GPUDIRECT_RDMA):
        plan.prerequisites.append(
            "run the NCCL container with the plan's docker_options (COS has no NVIDIA container toolkit, "
            "so no --gpus: devices and /var/lib/nvidia are mounted by hand)"
        )
    if fabric in (FabricName.GPUDIRECT_TCPX, FabricName.GPUDIRECT_TCPXO, FabricName.GPUDIRECT_RDMA):
        _nccl_container(plan)
