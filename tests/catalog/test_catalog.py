"""The catalog reproduces the seeds' facts and answers lookups the way the other areas rely on."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpufabric.catalog import (
    Cloud,
    FabricName,
    detect_node_shape,
    find_by_accelerator,
    get_fabric,
    get_instance,
    list_fabrics,
    list_instances,
    match_node_labels,
)
from gpufabric.errors import CatalogError

SEEDS = Path(__file__).parents[1] / "fixtures" / "catalog" / "seeds"


def seed000_efa_table() -> list[tuple[str, str, int]]:
    """(instance, 'GPU:count', #EFA) rows exactly as seed 000 prints them."""
    text = (SEEDS / "000_ad727619b5058053.txt").read_text()
    start = text.index("| Instance Type | GPU Type | #EFA |")
    rows = []
    for line in text[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        name, gpus, efa = (cell.strip() for cell in line.strip("|").split("|"))
        rows.append((name, gpus, int(efa)))
    return rows


def test_seed000_table_is_in_the_catalog_in_order() -> None:
    rows = seed000_efa_table()
    assert len(rows) == 24
    aws = list_instances("aws")
    assert [(i.name, i.accelerators, i.nic_count) for i in aws[: len(rows)]] == rows


def test_every_entry_has_provenance_and_fabric_facts() -> None:
    for inst in list_instances():
        assert inst.provenance, inst.name
        if inst.has_fabric and inst.accelerator_kind == "nvidia-gpu" and inst.cloud is Cloud.AWS:
            assert inst.k8s_fabric_resource == "vpc.amazonaws.com/efa"


@pytest.mark.parametrize(
    ("name", "fabric", "nics"),
    [
        ("p3dn.24xlarge", FabricName.EFA, 1),
        ("dl1.24xlarge", FabricName.EFA, 4),
        ("a3-highgpu-8g", FabricName.GPUDIRECT_TCPX, 4),
        ("a3-edgegpu-8g", FabricName.GPUDIRECT_TCPX, 4),
        ("a3-megagpu-8g", FabricName.GPUDIRECT_TCPXO, 8),
        ("a3-ultragpu-8g", FabricName.GPUDIRECT_RDMA, 8),
        ("a4-highgpu-8g", FabricName.GPUDIRECT_RDMA, 8),
        ("Standard_ND96isr_H100_v5", FabricName.INFINIBAND, 8),
        ("BM.GPU.H100.8", FabricName.ROCE, 16),
    ],
)
def test_fabric_and_nic_count(name: str, fabric: FabricName, nics: int) -> None:
    inst = get_instance(name)
    assert (inst.fabric, inst.nic_count) == (fabric, nics)


def test_p3dn_nic_speed_from_seed002() -> None:
    assert get_instance("p3dn.24xlarge").nic_gbps == 100


def test_p5_every_fourth_card_rule_only_on_p5_and_p5e() -> None:
    ruled = {i.name for i in list_instances("aws") if i.efa_with_ena_every}
    assert ruled == {"p5.48xlarge", "p5e.48xlarge"}


def test_lookup_is_case_insensitive_and_knows_hyperpod_names() -> None:
    assert get_instance("ML.P4D.24XLARGE").name == "p4d.24xlarge"


def test_unknown_instance_suggests_close_names() -> None:
    with pytest.raises(CatalogError, match=r"did you mean 'p5\.48xlarge'"):
        get_instance("p5.48xlarg")


def test_unknown_cloud_lists_choices() -> None:
    with pytest.raises(CatalogError, match="choose one of aws, gcp"):
        list_instances("ibm")


def test_every_fabric_is_defined_and_each_between_nodes_names_its_nccl_network() -> None:
    # The log lines that prove it: nccl_logs.patterns.network_proof (tests/nccl_logs/test_network_proof.py)
    assert {f.name for f in list_fabrics()} == set(FabricName)
    for fabric in list_fabrics():
        assert (fabric.nccl_net is not None) == (fabric.scope == "inter-node") == (fabric.network is not None)


def test_unknown_fabric_names_choices() -> None:
    with pytest.raises(CatalogError, match="did you mean 'efa'"):
        get_fabric("efaa")


def test_find_by_accelerator_prefers_fabric() -> None:
    hits = find_by_accelerator("H100", 8)
    assert hits[0].has_fabric
    assert {"p5.48xlarge", "a3-highgpu-8g"} <= {h.name for h in hits}


@pytest.mark.parametrize(
    ("labels", "provider", "expected"),
    [
        (
            {
                "node.kubernetes.io/instance-type": "ml.p4d.24xlarge",
                "sagemaker.amazonaws.com/compute-type": "hyperpod",
            },
            "eks",
            "p4d.24xlarge",
        ),
        (
            {"node.kubernetes.io/instance-type": "p5.48xlarge", "topology.k8s.aws/zone-id": "use1-az1"},
            "eks",
            "p5.48xlarge",
        ),
        (
            {"cloud.google.com/machine-family": "a3", "node.kubernetes.io/instance-type": "a3-megagpu-8g"},
            "gke",
            "a3-megagpu-8g",
        ),
        (
            {"cloud.google.com/machine-family": "a4", "node.kubernetes.io/instance-type": "a4-highgpu-8g"},
            "gke",
            "a4-highgpu-8g",
        ),
        (
            {"nebius.com/gpu": "true", "nvidia.com/gpu.product": "NVIDIA-H200", "nvidia.com/gpu.count": "8"},
            "nebius",
            "gpu-h200-sxm.8gpu-128vcpu-1600gb",
        ),
        (
            {"ib.coreweave.cloud/speed": "400G", "node.kubernetes.io/instance-type": "gd-8xh100ib-i128"},
            "coreweave",
            "gd-8xh100ib-i128",
        ),
        (
            {
                "node-role.together.ai/gpu": "true",
                "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
                "nvidia.com/gpu.count": "8",
            },
            "together",
            "together-h100-8x-ib",
        ),
        (
            {"oci.oraclecloud.com/rdma.host_id": "x", "node.kubernetes.io/instance-type": "BM.GPU.H100.8"},
            "oke",
            "BM.GPU.H100.8",
        ),
        (
            {
                "kubernetes.azure.com/agentpool": "gpu",
                "node.kubernetes.io/instance-type": "Standard_ND96isr_H100_v5",
            },
            "aks",
            "Standard_ND96isr_H100_v5",
        ),
    ],
)
def test_node_labels_identify_shape(labels: dict[str, str], provider: str, expected: str) -> None:
    detection = detect_node_shape(labels)
    assert detection is not None and detection.provider == provider
    assert detection.instance is not None and detection.instance.name == expected
    assert match_node_labels(labels) == detection.instance


def test_unknown_provider_and_unknown_shape() -> None:
    assert detect_node_shape({"kubernetes.io/hostname": "box"}) is None
    detection = detect_node_shape(
        {"topology.k8s.aws/zone-id": "x", "node.kubernetes.io/instance-type": "m5.large"}
    )
    assert detection is not None and detection.instance is None and detection.fabric is FabricName.SOCKET


def test_a_yaml_value_that_cannot_be_built_is_one_catalog_error() -> None:
    """A date with month 13 (found by the catalog-data fuzz, seed 865118) is a CatalogError, not a
    ValueError from PyYAML's timestamp constructor."""
    import pytest

    from gpufabric.catalog.loader import entries_from_text
    from gpufabric.errors import CatalogError

    with pytest.raises(CatalogError, match="cannot be converted"):
        entries_from_text("shapes:\n- name: x\n  since: 2026-13-01\n", "shapes.yaml", "shapes")
