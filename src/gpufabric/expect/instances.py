"""``shape_from_instance``: a ``NodeShape`` from gpufabric's catalog (GPU model and count, fabric, NIC count
and rate) and the published NVLink facts of the GPU model (``gpus``). ``source="catalog"``.

What the catalog does not hold stays ``None`` (PCIe generations, the NVLink of an 8-GPU board other than
NVIDIA's HGX layout), so the model names it as missing.
"""

from __future__ import annotations

from gpufabric.catalog import FabricName, InstanceType, get_instance
from gpufabric.errors import CatalogError
from gpufabric.expect.gpus import gpu_model_facts
from gpufabric.hardware import NicFacts, NicKind, NodeShape, NvLinkFacts

# How NCCL reaches each catalog fabric's NICs. GCP's GPUDirect-RDMA (a3-ultra, a4) runs on RoCE NICs;
# GPUDirect-TCPX/TCPXO drive plain Ethernet NICs through their own NCCL net plugin.
NIC_KIND: dict[FabricName, NicKind] = {
    FabricName.EFA: NicKind.EFA,
    FabricName.INFINIBAND: NicKind.INFINIBAND,
    FabricName.ROCE: NicKind.ROCE,
    FabricName.GPUDIRECT_RDMA: NicKind.ROCE,
    FabricName.GPUDIRECT_TCPX: NicKind.ETHERNET,
    FabricName.GPUDIRECT_TCPXO: NicKind.ETHERNET,
}


def _nvlink(inst: InstanceType) -> tuple[NvLinkFacts | None, list[str]]:
    facts = gpu_model_facts(inst.accelerator)
    if inst.intra_node is not FabricName.NVLINK:
        return None, []
    if facts is None or not facts.links_per_gpu:
        return NvLinkFacts(), [f"no published NVLink facts for {inst.accelerator} in gpufabric's GPU table"]
    # NVIDIA's 8-GPU HGX boards connect every GPU through NVSwitch (A100 and later); other counts: unknown.
    switched = facts.nvswitch_in_8_gpu_servers if inst.accelerator_count == 8 else None
    rate = f"{facts.links_per_gpu} x {facts.link_gbytes_per_s:g} GB/s"
    note = f"{inst.accelerator} NVLink: {rate} ({facts.source})"
    return (
        NvLinkFacts(
            generation=facts.nvlink_generation,
            links_per_gpu=facts.links_per_gpu,
            link_gbytes_per_s=facts.link_gbytes_per_s,
            nvswitch=switched,
        ),
        [note],
    )


def _nics(inst: InstanceType) -> tuple[NicFacts, ...]:
    kind = NIC_KIND.get(inst.fabric)
    if kind is not None:
        return tuple(
            NicFacts(name=f"{inst.fabric.value}{i}", kind=kind, rate_gbps=inst.nic_gbps)
            for i in range(inst.nic_count or 0)
        )
    # Socket-only shapes: NCCL's Socket transport uses one interface; the instance's network rate is its rate.
    return (NicFacts(name="eth0", kind=NicKind.ETHERNET, rate_gbps=inst.network_gbps),)


def shape_from_instance(instance_type: str) -> NodeShape:
    """The shape of ``instance_type`` as the catalog and NVIDIA's published NVLink facts give it."""
    inst = get_instance(instance_type)
    if inst.accelerator_kind != "nvidia-gpu":
        # Gaudi runs HCCL, Trainium the Neuron runtime: no NCCL path, ceiling or band to state for them.
        raise CatalogError(
            f"{inst.name} has {inst.accelerator} accelerators ({inst.accelerator_kind}): gpufabric's "
            "expected-performance model covers NCCL on NVIDIA GPUs, so it has no path, ceiling or band for "
            "this instance type; pick an NVIDIA one (`gpufabric catalog list`)"
        )
    nvlink, notes = _nvlink(inst)
    if inst.nic_count is None and inst.fabric is not FabricName.SOCKET:
        notes.append(f"the catalog does not know how many {inst.fabric.value} NICs {inst.name} has")
    return NodeShape(
        source="catalog",
        instance_type=inst.name,
        cloud=inst.cloud.value,
        gpu_model=inst.accelerator,
        gpu_count=inst.accelerator_count,
        nvlink=nvlink,
        nics=_nics(inst),
        notes=tuple(notes),
    )
