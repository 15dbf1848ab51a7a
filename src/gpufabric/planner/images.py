"""Container images the plans run, pinned to the tags their publishers pin, each with its source.

A floating tag (``:latest`` or none) would let a plan drift from the reference it was checked against:
Google couples the RxDM daemon's version to the NCCL plugin installer's, so both are pinned together
(container-engine-accelerators, commit 992db81, 2026-06-11; tests/fixtures/references/google/).
"""

from __future__ import annotations

from typing import NamedTuple


class Image(NamedTuple):
    ref: str
    source: str


_GCE_AI = "us-docker.pkg.dev/gce-ai-infra"
_GOOGLE = "Google's container-engine-accelerators"

TCPX_RXDM = Image(
    f"{_GCE_AI}/gpudirect-tcpx/tcpgpudmarxd-dev:v2.0.12", f"{_GOOGLE} gpudirect-tcpx/nccl-test-latest.yaml"
)
TCPX_PLUGIN = Image(
    f"{_GCE_AI}/gpudirect-tcpx/nccl-plugin-gpudirecttcpx-dev:v3.1.9",
    f"{_GOOGLE} gpudirect-tcpx/nccl-tcpx-installer.yaml and nccl-test-latest.yaml",
)
TCPXO_RXDM = Image(
    f"{_GCE_AI}/gpudirect-tcpxo/tcpgpudmarxd-dev:v1.0.21",
    f"{_GOOGLE} gpudirect-tcpxo/README.md (Jan 9, 2026 release)",
)
TCPXO_PLUGIN = Image(
    f"{_GCE_AI}/gpudirect-tcpxo/nccl-plugin-gpudirecttcpx-dev:v1.0.15",
    f"{_GOOGLE} gpudirect-tcpxo/README.md (Jan 9, 2026 release)",
)
GIB_PLUGIN = Image(
    f"{_GCE_AI}/gpudirect-gib/nccl-plugin-gib:v1.1.1", f"{_GOOGLE} gpudirect-rdma/nccl-rdma-installer.yaml"
)
GIB_DIAGNOSTIC = Image(
    f"{_GCE_AI}/gpudirect-gib/nccl-plugin-gib-diagnostic:v1.1.1", f"{_GOOGLE} gpudirect-rdma/nccl-test.yaml"
)
# The tag AWS's build of this image pushes (awsome-distributed-training micro-benchmarks/nccl-tests/
# buildspec.yaml, commit 7217859): its Dockerfile puts aws-ofi-nccl under /opt/amazon/ofi-nccl and sets
# LD_LIBRARY_PATH in the image, so pods must not replace that variable.
EFA_NCCL_TESTS = Image(
    "public.ecr.aws/hpc-cloud/nccl-tests:cuda12.8.1-efa1.43.2-ofiv1.16.3-ncclv2.27.7-1-testsv2.16.9",
    "AWS's awsome-distributed-training micro-benchmarks/nccl-tests (buildspec.yaml, nccl-tests.Dockerfile)",
)
EFA_TUNER_PLUGIN = "/opt/amazon/ofi-nccl/lib/x86_64-linux-gnu/libnccl-ofi-tuner.so"
# COS: no NVIDIA container toolkit, so no `docker --gpus`; the driver lives in /var/lib/nvidia
# (cos-extensions) and containers get the device nodes and the libraries by hand, as Google's COS GPU
# guide and SkyPilot's GPU_DIRECT_TCPX_SPECIFIC_OPTIONS do.
COS_GPU_DOCKER_OPTIONS = [
    *(f"--device=/dev/nvidia{i}" for i in range(8)),
    "--device=/dev/nvidiactl",
    "--device=/dev/nvidia-uvm",
    "--volume=/var/lib/nvidia/lib64:/usr/local/nvidia/lib64:ro",
    "--volume=/var/lib/nvidia/bin:/usr/local/nvidia/bin:ro",
]
# Intel Gaudi: Habana's container runtime hands the container its Gaudi devices (Habana's docker guide:
# `docker run --runtime=habana -e HABANA_VISIBLE_DEVICES=all --cap-add=sys_nice --ipc=host`).
HABANA_DOCKER_OPTIONS = [
    "--runtime=habana",
    "--env=HABANA_VISIBLE_DEVICES=all",
    "--env=OMPI_MCA_btl_vader_single_copy_mechanism=none",
    "--cap-add=SYS_NICE",
    "--ipc=host",
]
# AWS Trainium: collectives are tested with Neuron's nccom-test (aws-neuronx-tools), not nccl-tests. Neuron's
# own training Dockerfile builds on this DLC (aws-neuron-sdk deploy/docker-examples/training/
# Dockerfile-training-dlc, commit 81ce03a), and Neuron's DLC table lists aws-neuronx-tools in it.
NEURON_DLC = Image(
    "public.ecr.aws/neuron/pytorch-training-neuronx:2.9.0-neuronx-py310-sdk2.27.0-ubuntu24.04",
    "AWS Neuron SDK deploy/docker-examples/training/Dockerfile-training-dlc (aws-neuronx-tools: nccom-test)",
)


def neuron_device_options(devices: int) -> list[str]:
    """Neuron devices by node (Neuron's docker guide: ``--device=/dev/neuron0`` ... one per device)."""
    return [f"--device=/dev/neuron{i}" for i in range(devices)]


HABANA_IMAGE_HINT = (
    "an Intel Gaudi PyTorch image from vault.habana.ai (gaudi-docker/<release>/ubuntu22.04/habanalabs/"
    "pytorch-installer-<torch>) of a release that still supports first-generation Gaudi (DL1)"
)
