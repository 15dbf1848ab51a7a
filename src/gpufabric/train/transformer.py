"""The benchmark's model and data: a small decoder-only transformer LM and synthetic token batches.

Built from ``torch.nn.TransformerEncoderLayer`` (pre-norm, GELU, no dropout) with a causal mask, learned
position embeddings and an untied output projection, so nothing is downloaded and the parameter count is
exact arithmetic (``ModelSpec.parameter_count``). Data are random tokens drawn once per rank from a
seeded generator and reused, so input loading costs nothing and every step does the same work.
torch is imported here at module level: only rank-side code imports this module.
"""

from __future__ import annotations

import torch
from torch import nn

from gpufabric.train.config import ModelSpec

BATCH_POOL = 4  # distinct synthetic batches per rank, cycled


class TransformerLM(nn.Module):
    """Embeddings -> ``layers`` causal pre-norm blocks -> LayerNorm -> vocabulary logits."""

    def __init__(self, spec: ModelSpec) -> None:
        super().__init__()
        self.spec = spec
        self.tokens = nn.Embedding(spec.vocab, spec.hidden)
        self.positions = nn.Embedding(spec.seq_len, spec.hidden)
        self.blocks = nn.ModuleList(
            nn.TransformerEncoderLayer(
                d_model=spec.hidden,
                nhead=spec.heads,
                dim_feedforward=spec.hidden * spec.ffn_mult,
                dropout=0.0,
                activation="gelu",
                batch_first=True,
                norm_first=True,
            )
            for _ in range(spec.layers)
        )
        self.norm = nn.LayerNorm(spec.hidden)
        self.head = nn.Linear(spec.hidden, spec.vocab)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        length = tokens.shape[1]
        positions = torch.arange(length, device=tokens.device)
        x = self.tokens(tokens) + self.positions(positions)
        mask = nn.Transformer.generate_square_subsequent_mask(length, device=tokens.device, dtype=x.dtype)
        for block in self.blocks:
            x = block(x, src_mask=mask, is_causal=True)
        logits: torch.Tensor = self.head(self.norm(x))
        return logits


def build_model(spec: ModelSpec, *, seed: int, device: torch.device, dtype: torch.dtype) -> TransformerLM:
    """The same initial weights on every rank (same seed), as a data-parallel job starts."""
    torch.manual_seed(seed)
    return TransformerLM(spec).to(device=device, dtype=dtype)


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
    """Next-token cross-entropy, computed in fp32 whatever the model's dtype."""
    logits = model(batch[:, :-1])
    loss: torch.Tensor = nn.functional.cross_entropy(
        logits.float().reshape(-1, logits.shape[-1]), batch[:, 1:].reshape(-1)
    )
    return loss
