"""The variables each launcher sets to name a rank, readable without pydantic.

``bench.identity`` builds a rank's whole identity from them; the direct engine's rank reads its local rank
from them before anything else is imported, to start its CUDA device early (``engines.nccl.early_device``),
so this module imports nothing but the standard library's typing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

Source = Literal["torchrun", "openmpi", "slurm", "single"]

# (source, rank, world size, local rank, local world size); the first family that names a rank wins.
FAMILIES: tuple[tuple[Source, str, str, str, str], ...] = (
    ("torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"),
    (
        "openmpi",
        "OMPI_COMM_WORLD_RANK",
        "OMPI_COMM_WORLD_SIZE",
        "OMPI_COMM_WORLD_LOCAL_RANK",
        "OMPI_COMM_WORLD_LOCAL_SIZE",
    ),
    ("slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE"),
)


def local_rank_hint(environ: Mapping[str, str]) -> int:
    """The local rank ``identity.rank_identity`` will read, or 0 where it would refuse the variables (the
    caller only guesses with it; the identity's own reading says what is wrong)."""
    for _, rank_var, _, local_var, _ in FAMILIES:
        if (environ.get(rank_var) or "").strip():
            try:
                return max(int((environ.get(local_var) or "0").strip()), 0)
            except ValueError:
                return 0
    return 0
