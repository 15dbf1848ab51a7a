"""The GPUs of the node through NVML (``nvidia-ml-py``, module ``pynvml``): name, memory, PCI bus id, PCIe
link, NUMA node, and every NVLink's state, version and remote end.

``pynvml`` is pure-Python ctypes over ``libnvidia-ml.so``: it imports without a driver and fails only at
``nvmlInit``, so it is imported here, on first use, never with the CLI. A call a GPU or driver does not
support (``NVMLError_NotSupported``: NVLink on a PCIe card, NUMA id on older drivers) leaves that fact
``None``; a failure to start NVML at all is one note, and the snapshot falls back to ``nvidia-smi topo -m``.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any

from gpufabric.hardware.nvlink import NvLinkRecord
from gpufabric.hardware.pci import normal_bus_id
from gpufabric.hardware.shape import GpuFacts, PcieFacts


@dataclass
class NvmlReading:
    """What NVML said about the node's GPUs."""

    gpus: list[GpuFacts] = field(default_factory=list)
    links: list[NvLinkRecord] = field(default_factory=list)
    driver_version: str | None = None
    notes: list[str] = field(default_factory=list)


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _ask(nvml: Any, call: str, *args: Any) -> Any:
    """NVML's answer, or None where this GPU or driver does not support the query."""
    try:
        return getattr(nvml, call)(*args)
    except nvml.NVMLError:
        return None
    except AttributeError:  # an older nvidia-ml-py without this function
        return None


def read_nvml(nvml: Any = None) -> NvmlReading:
    """Every GPU NVML sees, with its NVLinks. ``nvml`` is the ``pynvml`` module (tests pass none: there is
    no fake NVML; the GPU-marked test reads the real one)."""
    reading = NvmlReading()
    if nvml is None:
        try:
            import pynvml as nvml_module
        except ImportError:
            reading.notes.append("GPUs: nvidia-ml-py is not installed (pip install nvidia-ml-py)")
            return reading
        nvml = nvml_module
    try:
        nvml.nvmlInit()
    except nvml.NVMLError as exc:
        reading.notes.append(f"GPUs: NVML did not start ({exc}); no NVIDIA driver here, or no GPU visible")
        return reading
    try:
        driver = _ask(nvml, "nvmlSystemGetDriverVersion")
        reading.driver_version = _text(driver) if driver is not None else None
        count = nvml.nvmlDeviceGetCount()
        for index in range(count):
            handle = nvml.nvmlDeviceGetHandleByIndex(index)
            gpu, links = _read_gpu(nvml, index, handle)
            reading.gpus.append(gpu)
            reading.links.extend(links)
    finally:
        with contextlib.suppress(nvml.NVMLError):
            nvml.nvmlShutdown()
    return reading


def _read_gpu(nvml: Any, index: int, handle: Any) -> tuple[GpuFacts, list[NvLinkRecord]]:
    memory = _ask(nvml, "nvmlDeviceGetMemoryInfo", handle)
    pci = _ask(nvml, "nvmlDeviceGetPciInfo", handle)
    bus_id = normal_bus_id(_text(pci.busId)) if pci is not None else None
    numa = _ask(nvml, "nvmlDeviceGetNumaNodeId", handle)
    gpu = GpuFacts(
        index=index,
        name=_text(nvml.nvmlDeviceGetName(handle)),
        memory_gib=memory.total / 2**30 if memory is not None and memory.total else None,
        pci_bus_id=bus_id,
        numa_node=numa if isinstance(numa, int) and numa >= 0 else None,
        pcie=PcieFacts(
            generation=_positive(_ask(nvml, "nvmlDeviceGetCurrPcieLinkGeneration", handle)),
            width=_positive(_ask(nvml, "nvmlDeviceGetCurrPcieLinkWidth", handle)),
            max_generation=_positive(_ask(nvml, "nvmlDeviceGetMaxPcieLinkGeneration", handle)),
            max_width=_positive(_ask(nvml, "nvmlDeviceGetMaxPcieLinkWidth", handle)),
        ),
    )
    return gpu, _read_links(nvml, index, handle)


def _positive(value: Any) -> int | None:
    return value if isinstance(value, int) and 0 < value <= 32 else None


def _read_links(nvml: Any, index: int, handle: Any) -> list[NvLinkRecord]:
    links: list[NvLinkRecord] = []
    switch_type = getattr(nvml, "NVML_NVLINK_DEVICE_TYPE_SWITCH", 2)
    for link in range(getattr(nvml, "NVML_NVLINK_MAX_LINKS", 18)):
        state = _ask(nvml, "nvmlDeviceGetNvLinkState", handle, link)
        if state is None:  # no such link on this GPU (or no NVLink at all): the rest are absent too
            break
        active = state == getattr(nvml, "NVML_FEATURE_ENABLED", 1)
        remote = _ask(nvml, "nvmlDeviceGetNvLinkRemotePciInfo", handle, link) if active else None
        remote_type = _ask(nvml, "nvmlDeviceGetNvLinkRemoteDeviceType", handle, link) if active else None
        links.append(
            NvLinkRecord(
                gpu=index,
                link=link,
                active=active,
                nvml_version=_ask(nvml, "nvmlDeviceGetNvLinkVersion", handle, link) if active else None,
                remote_bus_id=normal_bus_id(_text(remote.busId)) if remote is not None else None,
                remote_is_switch=None if remote_type is None else remote_type == switch_type,
            )
        )
    return links
