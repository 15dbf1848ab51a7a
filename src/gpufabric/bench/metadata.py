"""Where the numbers were measured: hosts, devices, driver, CUDA, torch, NCCL, fabric env, topology.

Collected on every rank (``local_facts``), gathered to rank 0, and turned into ``RunMetadata`` there.
Environment goes through ``redact_env`` before it is stored; only the prefixes that shape the fabric are
kept (NCCL_*, FI_*, CUDA_*, UCX_* ...), never the whole environment.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from collections.abc import Mapping
from typing import Any

import gpufabric
from gpufabric.boundary_names import ENV_PREFIX, VIRTUAL_NODE_ENV
from gpufabric.results.model import Device

RELEVANT_ENV_PREFIXES = (
    "NCCL_",
    "FI_",
    "CUDA_",
    "UCX_",
    "TORCH_NCCL_",
    "TORCH_SYMM_MEM_",
    "NVSHMEM_",
    "OMPI_MCA_",
    "RDMAV_",
    ENV_PREFIX,
    "LD_LIBRARY_PATH",
    "OFI_",
    "AWS_OFI_",
    "MASTER_",
    "GLOO_",
    "HCCL_",
)


def relevant_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The variables that shape the fabric, unredacted (the caller redacts)."""
    return {k: v for k, v in sorted(environ.items()) if k.startswith(RELEVANT_ENV_PREFIXES)}


def _run(argv: list[str]) -> str | None:
    if shutil.which(argv[0]) is None:
        return None
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout.strip() if proc.returncode == 0 and proc.stdout.strip() else None


def driver_version() -> str | None:
    out = _run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"])
    return out.splitlines()[0].strip() if out else None


def topology() -> str | None:
    return _run(["nvidia-smi", "topo", "-m"])


def nccl_version() -> str | None:
    import torch

    try:
        nccl: Any = torch.cuda.nccl
        version = nccl.version()
    except (AttributeError, RuntimeError):
        return None
    if isinstance(version, tuple):
        return ".".join(str(part) for part in version)
    return str(version)


def node_name(environ: Mapping[str, str] | None = None) -> str:
    """This rank's node in results: the host name, or ``host/vnodeK`` for a virtual node (whose ranks
    NCCL treats as a separate host through ``NCCL_HOSTID``)."""
    environ = os.environ if environ is None else environ
    host = socket.gethostname()
    virtual = environ.get(VIRTUAL_NODE_ENV)
    return f"{host}/vnode{virtual}" if virtual else host


def local_facts(rank: int, device: Any) -> dict[str, Any]:
    """What this rank knows about itself (small, picklable: it travels through all_gather_object)."""
    facts: dict[str, Any] = {"rank": rank, "host": node_name()}
    if device.type == "cuda":
        import torch

        props = torch.cuda.get_device_properties(device)
        facts["name"] = props.name
        facts["index"] = device.index
        pci = getattr(props, "pci_bus_id", None)
        facts["bus_id"] = str(pci) if pci is not None else None
    else:
        facts["name"] = "cpu"
        facts["index"] = None
        facts["bus_id"] = None
    return facts


def devices_from(facts: list[dict[str, Any]]) -> list[Device]:
    return [
        Device(rank=f["rank"], host=f["host"], index=f["index"], name=f["name"], bus_id=f["bus_id"])
        for f in facts
    ]


def static_metadata(environ: Mapping[str, str], on_gpu: bool) -> dict[str, Any]:
    """Versions and topology of the host rank 0 runs on."""
    import torch

    return {
        "tool_version": gpufabric.__version__,
        "torch_version": torch.__version__,
        "cuda_version": torch.version.cuda,
        "nccl_version": nccl_version() if on_gpu else None,
        "driver_version": driver_version() if on_gpu else None,
        "topology": topology() if on_gpu else None,
        "pid": os.getpid(),
    }
