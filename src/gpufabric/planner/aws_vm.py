"""AWS VM rendering: RunInstances with every EFA, a cluster placement group, and the EFA security group.

Bodies are EC2 API request parameters (botocore's shapes; the tests validate them with botocore's own
ParamValidator). IDs the user owns are ``${NAME}`` references listed in ``Plan.parameters``. Closes two
SkyPilot gaps: the placement group is created (SkyPilot never does, issue #6939) and the multi-EFA /
public-IP trade-off is a warning, not a silent downgrade (issue #8391).
"""

from __future__ import annotations

from typing import Any

from gpufabric.catalog import FabricName
from gpufabric.planner.model import Plan

EFA_DOCKER_OPTIONS = ["--cap-add=IPC_LOCK", "--device=/dev/infiniband", "--ulimit", "memlock=-1:-1"]
DLAMI = "Deep Learning Base OSS Nvidia Driver GPU AMI (Ubuntu 22.04)"


def network_interfaces(plan: Plan, public_ip: bool) -> list[dict[str, Any]]:
    """Primary NIC on card 0, then one EFA per extra network card (p5/p5e: 'efa' on every 4th card)."""
    efa = plan.fabric is FabricName.EFA
    primary: dict[str, Any] = {
        "DeviceIndex": 0,
        "NetworkCardIndex": 0,
        "SubnetId": "${SUBNET_ID}",
        "Groups": ["${SECURITY_GROUP_ID}"],
    }
    if efa:
        primary["InterfaceType"] = "efa"
    if plan.nic_count <= 1:
        # AWS accepts AssociatePublicIpAddress only when the instance has a single network interface.
        primary["AssociatePublicIpAddress"] = public_ip
    interfaces = [primary]
    every = plan.instance.efa_with_ena_every if plan.instance else None
    for card in range(1, plan.nic_count if efa else 0):
        interfaces.append(
            {
                "DeviceIndex": 1,
                "NetworkCardIndex": card,
                "SubnetId": "${SUBNET_ID}",
                "Groups": ["${SECURITY_GROUP_ID}"],
                "InterfaceType": "efa" if every and card % every == 0 else "efa-only",
            }
        )
    return interfaces


def render_aws_vm(plan: Plan, public_ip: bool) -> None:
    assert plan.instance is not None
    name = plan.request.cluster_name
    tags = [{"Key": "gpufabric:cluster", "Value": name}]
    plan.documents["ec2.CreatePlacementGroup"] = {
        "GroupName": f"{name}-pg",
        "Strategy": "cluster",
        "TagSpecifications": [{"ResourceType": "placement-group", "Tags": tags}],
    }
    plan.documents["ec2.CreateSecurityGroup"] = {
        "GroupName": f"{name}-sg",
        "Description": "gpufabric: all traffic between members "
        "(EFA needs self-referencing ingress and egress)",
        "VpcId": "${VPC_ID}",
    }
    self_rule = [{"IpProtocol": "-1", "UserIdGroupPairs": [{"GroupId": "${SECURITY_GROUP_ID}"}]}]
    plan.documents["ec2.AuthorizeSecurityGroupIngress"] = {
        "GroupId": "${SECURITY_GROUP_ID}",
        "IpPermissions": self_rule,
    }
    plan.documents["ec2.AuthorizeSecurityGroupEgress"] = {
        "GroupId": "${SECURITY_GROUP_ID}",
        "IpPermissions": self_rule,
    }
    plan.documents["ec2.RunInstances"] = {
        "ImageId": "${IMAGE_ID}",
        "InstanceType": plan.instance.name,
        "MinCount": plan.nodes,
        "MaxCount": plan.nodes,
        "Placement": {"GroupName": f"{name}-pg"},
        "NetworkInterfaces": network_interfaces(plan, public_ip),
        "TagSpecifications": [{"ResourceType": "instance", "Tags": tags}],
    }
    plan.parameters.update(
        {
            "VPC_ID": "the VPC of the subnet",
            "SUBNET_ID": "one subnet (one availability zone) for every node and every EFA",
            "SECURITY_GROUP_ID": "the id CreateSecurityGroup returns",
            "IMAGE_ID": f"an AMI with the EFA driver, libfabric and aws-ofi-nccl, "
            f"e.g. the newest '{DLAMI} <date>'",
        }
    )
    if plan.fabric is FabricName.EFA:
        plan.docker_options = list(EFA_DOCKER_OPTIONS)
        plan.prerequisites += [
            f"AMI with the EFA driver, libfabric and aws-ofi-nccl (the '{DLAMI}' ships them)",
            f"check on a node: `fi_info -p efa -t FI_EP_RDM` lists {plan.nic_count} EFA device(s)",
            "all nodes in one subnet and one cluster placement group (rendered here)",
        ]
    if plan.nic_count > 1:
        plan.warnings.append(
            f"{plan.nic_count} EFA interfaces need private IPs: AWS gives no public IP to an instance with "
            "several network cards; reach the nodes through a bastion, VPN or SSM"
        )
