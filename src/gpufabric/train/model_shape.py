"""The benchmark model's shape: a GPT-style decoder (``ModelSpec``), its presets and their arithmetic.

The model is GPT-2's layout as nanoGPT writes it without biases: learned token and position embeddings,
``layers`` pre-norm blocks (causal self-attention, a 4x GELU MLP), a final LayerNorm and an output head
tied to the token embedding. So a preset's parameter count is exact arithmetic
(``ModelSpec.parameter_count``, tested against the real module) and matches the sizes GPU users know.

Presets: ``tiny`` (the CPU default: seconds on gloo ranks), ``small``/``medium`` (quick GPU checks), and
the GPT-3 paper's shapes (Brown et al. 2020, "Language Models are Few-Shot Learners", Table 2.1) at
GPT-2's vocabulary padded to 50,304 as nanoGPT does: ``gpt-350m``, ``gpt-760m`` and ``gpt-1.3b`` (16
heads of 128 there). ``gpt-760m`` is the GPU default (``PRESET_BATCH`` says why). No torch here: the CLI
imports this module on machines without torch.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from gpufabric.errors import UsageError
from gpufabric.options.train import AUTO_MODEL as AUTO_MODEL  # --model auto: by device


class ModelSpec(BaseModel):
    """A GPT-style decoder: embeddings, ``layers`` pre-norm blocks, final norm, tied LM head."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    layers: int = Field(ge=1)
    hidden: int = Field(ge=8)
    heads: int = Field(ge=1)
    seq_len: int = Field(ge=2)
    vocab: int = Field(ge=2)
    ffn_mult: int = Field(default=4, ge=1)

    def block_parameters(self) -> int:
        """One block: q, k, v and output projections (4h^2), the MLP (2 x h x ffn), two norm weights."""
        h = self.hidden
        return 4 * h * h + 2 * h * h * self.ffn_mult + 2 * h

    def outer_parameters(self) -> int:
        """Everything outside the blocks: token embedding (= the tied head), positions, final norm."""
        return self.vocab * self.hidden + self.seq_len * self.hidden + self.hidden

    def parameter_count(self) -> int:
        """Parameters of ``gpufabric.train.transformer.build_model(self)`` (tested against the module)."""
        return self.layers * self.block_parameters() + self.outer_parameters()

    def flops_per_token(self) -> int:
        """Training FLOPs per token, as PaLM's appendix B counts them (Chowdhery et al. 2022): 6 x the
        matmul parameters (every weight but the position table and the norms) + 12 x layers x hidden x
        seq for attention's score and value products (causal masking not subtracted, as there)."""
        h = self.hidden
        matmul = self.layers * (4 * h * h + 2 * h * h * self.ffn_mult) + self.vocab * h
        return 6 * matmul + 12 * self.layers * h * self.seq_len


GPT2_VOCAB = 50_304  # GPT-2's 50,257 tokens padded to a multiple of 64, as nanoGPT pads it
MODEL_PRESETS: dict[str, ModelSpec] = {
    "tiny": ModelSpec(layers=2, hidden=64, heads=2, seq_len=32, vocab=256),
    "small": ModelSpec(layers=4, hidden=256, heads=4, seq_len=128, vocab=8192),
    "medium": ModelSpec(layers=12, hidden=768, heads=12, seq_len=512, vocab=32768),
    "gpt-350m": ModelSpec(layers=24, hidden=1024, heads=16, seq_len=1024, vocab=GPT2_VOCAB),
    "gpt-760m": ModelSpec(layers=24, hidden=1536, heads=16, seq_len=1024, vocab=GPT2_VOCAB),
    "gpt-1.3b": ModelSpec(layers=24, hidden=2048, heads=16, seq_len=1024, vocab=GPT2_VOCAB),
}
PRESET_BATCH: dict[str, int] = {
    "tiny": 8,
    "small": 8,
    "medium": 8,
    "gpt-350m": 2,
    "gpt-760m": 4,
    "gpt-1.3b": 2,
}
"""Samples per rank per step when ``--batch-size`` is not given.

The GPU default is ``gpt-760m`` at batch 4 (4,096 tokens per GPU, 16,384 per 4-GPU step), because
``gpt-350m`` (the default until 2026-11-27 15:00 UTC) leaves the step to the host at any batch: on 4x
H200 its one-GPU step took the same time at batch 4 and batch 2 (the reference loop: 28.93 and 30.40 ms,
docs/benchmarks.md section 3b) though batch 2 holds half the FLOPs (4.96 TFLOP, ~10 ms at 50% MFU): the
GPU waits for Python to issue ~1,500 kernels. Its 709 MB of bf16 gradients then took 4.1 ms on the wire
against 4-GPU steps of 41-46 ms (a 8.9-10.0% share, the issue-37 target being 10%), and each rank's host
jitter turned into ranks waiting for each other at the all-reduces (14:33 UTC: DDP steps back to back
45.83 ms against 31.87 ms for the communication-free twin on the same 4 GPUs, with no exposed
communication at the end of backward in steps started together). A smaller batch or sequence cannot
raise the share of a host-paced step: it cuts GPU work, not issue time. ``gpt-760m`` has the same 24
blocks (the same kernels to issue) at 1.5x the width: 20.45 TFLOP per GPU step at batch 4 (~41 ms at 50%
MFU, above the ~30 ms the host needs to issue it, so the GPU paces the step) and 1.52 GB of bf16
gradients, ~8.8 ms on the wire at the ~260 GB/s busbw measured for gpt-350m's buckets: 12-19% of a
45-70 ms step at 30-50% MFU (arithmetic from those figures). Measured on 4x H200 at 15:04 UTC: a 57.0 ms
DDP step, 8.05 ms on the wire (14.1%), MFU 36.3%, the default run 25.6 s (docs/benchmarks.md section 3b).
It is the GPT-3 paper's 760M shape at the batch a GPU user trains it with, and fits an 80 GB GPU under
DDP with its one-rank twin (10 bytes a parameter, twice: 15 GB, plus activations)."""
CPU_DEFAULT_MODEL = "tiny"
GPU_DEFAULT_MODEL = "gpt-760m"

HEAD_DIM = 64
"""Width of one attention head when ``--hidden`` sets the head count (GPT-2's, and the presets' scale)."""


SMALL_GPU_MODEL = "gpt-350m"
SMALL_GPU_BELOW_BYTES = 40 << 30
"""``--model auto`` on a GPU of less than 40 GiB takes ``gpt-350m``: ``gpt-760m`` at batch 4 holds about
15 GB of weights, gradients and AdamW state for DDP and its one-rank twin, plus about 5 GB of activations
(an estimate from the shapes; it was measured only on 141 GB H200s), too close to a 24 GB card's memory."""


def default_model(on_gpu: bool, gpu_memory_bytes: int | None = None) -> str:
    """The preset ``--model auto`` takes: the CPU default, else the GPU default unless this host's
    smallest GPU (``gpu_memory_bytes``, None: unknown) is under ``SMALL_GPU_BELOW_BYTES``."""
    if not on_gpu:
        return CPU_DEFAULT_MODEL
    if gpu_memory_bytes is not None and gpu_memory_bytes < SMALL_GPU_BELOW_BYTES:
        return SMALL_GPU_MODEL
    return GPU_DEFAULT_MODEL


def model_spec(
    preset: str, *, layers: int | None = None, hidden: int | None = None, heads: int | None = None
) -> ModelSpec:
    """The preset's shape with overrides; the head count follows ``--hidden`` (64 per head) unless given."""
    if preset not in MODEL_PRESETS:
        raise UsageError(
            f"--model: unknown size {preset!r}; choose from {AUTO_MODEL}, {', '.join(MODEL_PRESETS)}"
        )
    base = MODEL_PRESETS[preset]
    if layers is not None and layers < 1:
        raise UsageError(f"--layers: {layers} must be at least 1")
    if hidden is not None and heads is None and (hidden < HEAD_DIM or hidden % HEAD_DIM):
        lower = max(HEAD_DIM, hidden // HEAD_DIM * HEAD_DIM)
        nearest = f"{lower}" if hidden < HEAD_DIM else f"{lower} or {lower + HEAD_DIM}"
        raise UsageError(
            f"--hidden: {hidden} is not a multiple of {HEAD_DIM} (one attention head per {HEAD_DIM}); "
            f"use {nearest}"
        )
    if hidden is not None and hidden < 8:
        raise UsageError(f"--hidden: {hidden} must be at least 8")
    width = hidden if hidden is not None else base.hidden
    if heads is None:
        heads = base.heads if hidden is None else width // HEAD_DIM
    if heads < 1 or width % heads:
        raise UsageError(
            f"--hidden: {width} is not divisible by {heads} attention heads; use a multiple of {heads}"
        )
    return base.model_copy(
        update={"layers": layers if layers is not None else base.layers, "hidden": width, "heads": heads}
    )


def step_bytes(spec: ModelSpec, *, strategy: str, on_gpu: bool) -> dict[str, int]:
    """nccl-tests sizes one data-parallel step communicates, by collective, before FSDP's padding: DDP
    all-reduces every gradient once (bf16 on GPUs); FSDP2 gathers each block twice and the embedding/
    norm/head unit once (bf16 on GPUs) and reduce-scatters every gradient once (fp32)."""
    params = spec.parameter_count()
    if strategy == "ddp":
        return {"all_reduce": params * (2 if on_gpu else 4)}
    gathered = 2 * spec.layers * spec.block_parameters() + spec.outer_parameters()
    return {"all_gather": gathered * (2 if on_gpu else 4), "reduce_scatter": params * 4}
