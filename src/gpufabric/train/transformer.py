"""The benchmark's model and data: a GPT-style decoder (``train.model_shape``) and synthetic token batches.

Attention is ``scaled_dot_product_attention`` with ``is_causal=True``, so bf16 GPU ranks run a
FlashAttention kernel as real training loops do (``nn.TransformerEncoderLayer`` with an explicit mask
falls back to slower kernels). No biases, LayerNorm weights only, the head tied to the token embedding:
the parameter count is ``ModelSpec.parameter_count`` exactly. Data are random tokens drawn once per rank
from a seeded generator and reused, so input loading costs nothing and every step does the same work.
torch is imported here at module level: only rank-side code imports this module.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional

from gpufabric.train.model_shape import ModelSpec

BATCH_POOL = 4  # distinct synthetic batches per rank, cycled


class Attention(nn.Module):
    def __init__(self, spec: ModelSpec) -> None:
        super().__init__()
        self.heads = spec.heads
        self.qkv = nn.Linear(spec.hidden, 3 * spec.hidden, bias=False)
        self.proj = nn.Linear(spec.hidden, spec.hidden, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, length, width = x.shape
        q, k, v = self.qkv(x).split(width, dim=2)
        shape = (batch, length, self.heads, width // self.heads)
        q, k, v = (t.view(shape).transpose(1, 2) for t in (q, k, v))
        y = functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        out: torch.Tensor = self.proj(y.transpose(1, 2).reshape(batch, length, width))
        return out


class Block(nn.Module):
    """Pre-norm: x + attention(norm(x)), then x + mlp(norm(x)). The unit FSDP shards."""

    def __init__(self, spec: ModelSpec) -> None:
        super().__init__()
        ffn = spec.hidden * spec.ffn_mult
        self.norm1 = nn.LayerNorm(spec.hidden, bias=False)
        self.attention = Attention(spec)
        self.norm2 = nn.LayerNorm(spec.hidden, bias=False)
        self.mlp = nn.Sequential(
            nn.Linear(spec.hidden, ffn, bias=False), nn.GELU(), nn.Linear(ffn, spec.hidden, bias=False)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attention(self.norm1(x))
        out: torch.Tensor = x + self.mlp(self.norm2(x))
        return out


class TransformerLM(nn.Module):
    """Embeddings -> ``layers`` blocks -> LayerNorm -> logits through the tied token embedding."""

    def __init__(self, spec: ModelSpec) -> None:
        super().__init__()
        self.spec = spec
        self.tokens = nn.Embedding(spec.vocab, spec.hidden)
        self.positions = nn.Embedding(spec.seq_len, spec.hidden)
        self.blocks = nn.ModuleList(Block(spec) for _ in range(spec.layers))
        self.norm = nn.LayerNorm(spec.hidden, bias=False)
        self.head = nn.Linear(spec.hidden, spec.vocab, bias=False)
        self.head.weight = self.tokens.weight  # tied, as GPT-2 and the GPT-3 shapes are
        for table in (self.tokens, self.positions):  # GPT-2's init: unit-variance tables blow up the logits
            nn.init.normal_(table.weight, std=0.02)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(tokens.shape[1], device=tokens.device)
        x = self.tokens(tokens) + self.positions(positions)
        for block in self.blocks:
            x = block(x)
        logits: torch.Tensor = self.head(self.norm(x))
        return logits


def build_model(spec: ModelSpec, *, seed: int, device: torch.device, dtype: torch.dtype) -> TransformerLM:
    """The same initial weights on every rank (same seed), as a data-parallel job starts."""
    torch.manual_seed(seed)
    with torch.device(device):  # built where it runs: a 1.3B model never passes through host memory
        model = TransformerLM(spec)
    return model.to(dtype=dtype)


def synthetic_batches(
    spec: ModelSpec, batch_size: int, *, rank: int, seed: int, device: torch.device
) -> list[torch.Tensor]:
    """``BATCH_POOL`` token batches of shape (batch, seq_len + 1): inputs and next-token targets."""
    generator = torch.Generator().manual_seed(seed * 1_000_003 + rank)
    return [
        torch.randint(0, spec.vocab, (batch_size, spec.seq_len + 1), generator=generator).to(device)
        for _ in range(BATCH_POOL)
    ]


def lm_loss(model: nn.Module, batch: torch.Tensor) -> torch.Tensor:
    """Next-token cross-entropy, computed in fp32 whatever the model's dtype (as autocast would)."""
    logits = model(batch[:, :-1])
    loss: torch.Tensor = functional.cross_entropy(
        logits.float().reshape(-1, logits.shape[-1]), batch[:, 1:].reshape(-1)
    )
    return loss
