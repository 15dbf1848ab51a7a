"""Peak dense bf16 tensor-core FLOP/s per GPU model, from NVIDIA's datasheets: the denominator of MFU.

Datasheets print bf16 "with sparsity" (2:4 structured sparsity); dense training gets half of that, which
is the number kept here, as PaLM's MFU (Chowdhery et al. 2022, appendix B) and torchtitan do. A GPU that
is not in the table, or whose name does not say which part it is (an H100 name without SXM/HBM3, PCIe
or NVL), gets no number: the result says which fact is missing. No torch here.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

H100_SOURCE = "NVIDIA H100 Tensor Core GPU datasheet (bf16, half the with-sparsity figure)"
H200_SOURCE = "NVIDIA H200 Tensor Core GPU datasheet (bf16, half the with-sparsity figure)"
A100_SOURCE = "NVIDIA A100 Tensor Core GPU datasheet (bf16 312 TFLOPS dense)"
L40S_SOURCE = "NVIDIA L40S datasheet (bf16, half the with-sparsity figure)"


class PeakFlops(BaseModel):
    """A GPU's dense bf16 peak, or why there is none (``tflops`` None, ``missing`` says what)."""

    model_config = ConfigDict(extra="forbid")

    device: str
    part: str | None = None
    tflops: float | None = None
    source: str | None = None
    missing: str | None = None


# (words that must all appear in the device name, part, dense bf16 TFLOP/s, source); first match wins,
# so the specific parts (NVL, PCIe) come before the SXM ones.
PEAKS: tuple[tuple[tuple[str, ...], str, float, str], ...] = (
    (("H100", "NVL"), "H100 NVL", 835.0, H100_SOURCE),
    (("H100", "PCIE"), "H100 PCIe", 756.0, H100_SOURCE),
    (("H100", "HBM3"), "H100 SXM", 989.4, H100_SOURCE),
    (("H100", "SXM"), "H100 SXM", 989.4, H100_SOURCE),
    (("H200", "NVL"), "H200 NVL", 835.0, H200_SOURCE),
    (("H200",), "H200 SXM", 989.4, H200_SOURCE),
    (("A100",), "A100", 312.0, A100_SOURCE),
    (("L40S",), "L40S", 362.05, L40S_SOURCE),
)


def peak_for(device: str | None) -> PeakFlops:
    """The peak of the GPU named ``device`` (``torch.cuda.get_device_name``), or what is missing."""
    if not device:
        return PeakFlops(
            device="", missing="the GPU's model name (no GPU was recorded: a CPU run has no MFU)"
        )
    words = device.upper().replace("-", " ")
    for needed, part, tflops, source in PEAKS:
        if all(word in words for word in needed):
            return PeakFlops(device=device, part=part, tflops=tflops, source=source)
    if "H100" in words:
        missing = "which H100 part this is (SXM 989, PCIe 756 or NVL 835 TFLOP/s): the name does not say"
    else:
        missing = f"the dense bf16 peak of {device!r} (not in gpufabric's datasheet table)"
    return PeakFlops(device=device, missing=missing)
