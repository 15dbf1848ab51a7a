"""NVLink facts of each GPU model, as NVIDIA publishes them, for shapes that name a model but were not read
from the machine (a catalog instance type, a published figure).

NVIDIA's NVLink page gives, per generation, the links per GPU and the total bandwidth per GPU (both
directions): NVLink2 (Volta) 6 links / 300 GB/s, NVLink3 (Ampere) 12 / 600, NVLink4 (Hopper) 18 / 900,
NVLink5 (Blackwell) 18 / 1800. One link, one direction is therefore total / links / 2: 25, 25, 25, 50 GB/s.
A model not listed here (or a PCIe card) gets no NVLink facts: the model then names the missing fact.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field

NVLINK_PAGE = "https://www.nvidia.com/en-us/data-center/nvlink/"


class GpuModelFacts(BaseModel):
    """One GPU model's NVLink as its vendor states it (the SXM part: the one in 8-GPU servers)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str = Field(description="short name, e.g. H100")
    nvlink_generation: int | None = Field(default=None, ge=1)
    links_per_gpu: int | None = Field(default=None, ge=0)
    link_gbytes_per_s: float | None = Field(default=None, gt=0, description="one link, one direction")
    nvswitch_in_8_gpu_servers: bool | None = Field(
        default=None, description="HGX/DGX 8-GPU boards connect every GPU through NVSwitch"
    )
    source: str = Field(description="the NVIDIA page that states these facts")


def _nvlink(model: str, generation: int, links: int, per_link: float, page: str) -> GpuModelFacts:
    return GpuModelFacts(
        model=model,
        nvlink_generation=generation,
        links_per_gpu=links,
        link_gbytes_per_s=per_link,
        nvswitch_in_8_gpu_servers=generation >= 3,  # HGX A100 and later: NVSwitch; DGX-1 V100: hybrid mesh
        source=f"{page} and {NVLINK_PAGE}",
    )


def _pcie_only(model: str, page: str) -> GpuModelFacts:
    return GpuModelFacts(model=model, links_per_gpu=0, source=page)


GPU_MODELS: dict[str, GpuModelFacts] = {
    facts.model: facts
    for facts in (
        _nvlink("V100", 2, 6, 25.0, "https://www.nvidia.com/en-us/data-center/v100/"),
        _nvlink("A100", 3, 12, 25.0, "https://www.nvidia.com/en-us/data-center/a100/"),
        _nvlink("H100", 4, 18, 25.0, "https://www.nvidia.com/en-us/data-center/h100/"),
        _nvlink("H200", 4, 18, 25.0, "https://www.nvidia.com/en-us/data-center/h200/"),
        _nvlink("B200", 5, 18, 50.0, "https://www.nvidia.com/en-us/data-center/dgx-b200/"),
        _nvlink("B300", 5, 18, 50.0, "https://www.nvidia.com/en-us/data-center/dgx-b300/"),
        _nvlink("GB200", 5, 18, 50.0, "https://www.nvidia.com/en-us/data-center/gb200-nvl72/"),
        _pcie_only("A10G", "https://www.nvidia.com/en-us/data-center/products/a10-gpu/"),
        _pcie_only("L4", "https://www.nvidia.com/en-us/data-center/l4/"),
        _pcie_only("L40S", "https://www.nvidia.com/en-us/data-center/l40s/"),
        _pcie_only("T4", "https://www.nvidia.com/en-us/data-center/tesla-t4/"),
    )
}
# Longest first, so "GB200" is not read as "B200" and "H100" not as "H10".
_MODEL_WORDS = re.compile(
    r"(?<![A-Z0-9])(" + "|".join(sorted(GPU_MODELS, key=len, reverse=True)) + r")(?![0-9])", re.IGNORECASE
)


def short_model(name: str | None) -> str | None:
    """``NVIDIA H100 80GB HBM3`` -> ``H100``; ``a100`` -> ``A100``; None when no known model is named."""
    if not name:
        return None
    match = _MODEL_WORDS.search(name)
    return match.group(1).upper() if match else None


def gpu_model_facts(name: str | None) -> GpuModelFacts | None:
    """The published facts of the model ``name`` names (driver product name or short name), or None."""
    model = short_model(name)
    return GPU_MODELS.get(model) if model else None
