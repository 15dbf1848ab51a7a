"""AWS VM rendering: RunInstances with every EFA, a cluster placement group, and the EFA security group.

Bodies are EC2 API request parameters (botocore's shapes; the tests validate them with botocore's own
ParamValidator). IDs the user owns are ``${NAME}`` references listed in ``Plan.parameters``. Closes two
SkyPilot gaps: the placement group is created (SkyPilot never does, issue #6939) and the multi-EFA /
public-IP trade-off is a warning, not a silent downgrade (issue #8391).
"""

from __future__ import annotations

from typing import Any

from gpufabric.catalog import FabricName
from gpufabric.planner.fabric_env import HABANA
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


def _ami(plan: Plan) -> str:
    kind = plan.instance.accelerator_kind if plan.instance else "nvidia-gpu"
    if kind == HABANA:
        return "a Habana-supported AMI for DL1 (Habana's AWS guide: its AMIs need no extra EFA packages)"
    if kind == "aws-trainium":
        return "the newest AWS Deep Learning AMI Neuron (EFA driver, libfabric and the Neuron runtime)"
    return f"the newest '{DLAMI} <date>' (EFA driver, libfabric, aws-ofi-nccl in /opt/amazon/ofi-nccl)"


def _ami_prerequisite(plan: Plan) -> str:
    kind = plan.instance.accelerator_kind if plan.instance else "nvidia-gpu"
    if kind != "nvidia-gpu":
        return f"AMI: {_ami(plan)}"
    return (
        f"AMI: the '{DLAMI}' keeps aws-ofi-nccl under /opt/amazon/ofi-nccl; the plan sets no plugin path "
        "(the AMI's own), so check `ls /opt/amazon/ofi-nccl/lib*/libnccl-net*` and that NCCL logs "
        "'NET/OFI Selected provider is efa'"
    )


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
    # SSH from the operator's network, as SkyPilot's security group opens tcp:22: without it nobody reaches
    # the nodes to start the job.
    ssh_rule = {
        "IpProtocol": "tcp",
        "FromPort": 22,
        "ToPort": 22,
        "IpRanges": [{"CidrIp": "${SSH_CIDR}", "Description": "ssh"}],
    }
    plan.documents["ec2.AuthorizeSecurityGroupIngress"] = {
        "GroupId": "${SECURITY_GROUP_ID}",
        "IpPermissions": [*self_rule, ssh_rule],
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
        "KeyName": "${KEY_NAME}",
        "IamInstanceProfile": {"Name": "${IAM_INSTANCE_PROFILE}"},
        "TagSpecifications": [{"ResourceType": "instance", "Tags": tags}],
    }
    plan.parameters.update(
        {
            "VPC_ID": "the VPC of the subnet",
            "SUBNET_ID": "one subnet (one availability zone) for every node and every EFA",
            "SECURITY_GROUP_ID": "the id CreateSecurityGroup returns",
            "IMAGE_ID": _ami(plan),
            "SSH_CIDR": "the network you reach the nodes from (e.g. your VPN's CIDR), never 0.0.0.0/0",
            "KEY_NAME": "an EC2 key pair in the region (ssh access)",
            "IAM_INSTANCE_PROFILE": "an instance profile for the nodes (e.g. with "
            "AmazonSSMManagedInstanceCore to reach private-IP nodes through SSM)",
        }
    )
    if plan.fabric is FabricName.EFA:
        plan.docker_options = list(EFA_DOCKER_OPTIONS)
        plan.prerequisites += [
            _ami_prerequisite(plan),
            f"check on a node: `fi_info -p efa -t FI_EP_RDM` lists {plan.nic_count} EFA device(s)",
            "all nodes in one subnet and one cluster placement group (rendered here)",
        ]
    if plan.nic_count > 1:
        plan.warnings.append(
            f"{plan.nic_count} EFA interfaces need private IPs: AWS gives no public IP to an instance with "
            "several network cards; reach the nodes through a bastion, VPN or SSM"
        )
