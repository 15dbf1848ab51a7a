"""What a sweep measures, the first part of ``BenchConfig``: the collectives, the sizes (requested bytes, as
nccl-tests' -b/-e/-f), the element type, the reduction, the root, and whether results are checked.

Names are normalised here as the flags take them (nccl-tests' binary names, ``all``, type aliases), and a
name no engine knows is one ``UsageError`` naming the flag and the valid choices.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from gpufabric.bench.semantics import ALL_COLLECTIVES, COLLECTIVES, PRINTS_OP, ROOTED
from gpufabric.collectives import ALIASES as COLLECTIVE_ALIASES
from gpufabric.errors import UsageError
from gpufabric.options import BENCH_DEFAULTS, GPU_SWEEP
from gpufabric.units import parse_size, size_sweep

# nccl-tests' type and op names (src/common.cu test_typenames / test_opnames), with their word sizes.
DTYPE_SIZES: dict[str, int] = {
    "int8": 1,
    "uint8": 1,
    "int32": 4,
    "uint32": 4,
    "int64": 8,
    "uint64": 8,
    "half": 2,
    "float": 4,
    "double": 8,
    "bfloat16": 2,
    "f8e4m3": 1,
    "f8e5m2": 1,
}
DTYPE_ALIASES: dict[str, str] = {
    "char": "int8",
    "int": "int32",
    "float16": "half",
    "float32": "float",
    "float64": "double",
    "bf16": "bfloat16",
    "fp16": "half",
    "fp32": "float",
    "fp8": "f8e4m3",
    "fp8e4m3": "f8e4m3",
    "fp8e5m2": "f8e5m2",
    "float8e4m3": "f8e4m3",
    "float8e5m2": "f8e5m2",
}
REDOPS: tuple[str, ...] = ("sum", "prod", "max", "min", "avg")
FLOAT_DTYPES = frozenset({"half", "float", "double", "bfloat16", "f8e4m3", "f8e5m2"})
# NCCL's fp8 types have no torch.distributed counterpart: the direct engine (and nccl-tests) only.
DIRECT_ONLY_DTYPES = frozenset({"f8e4m3", "f8e5m2"})


class SweepSettings(BaseModel):
    """The collectives and sizes to measure; defaults: ``options.GPU_SWEEP``, nccl-tests' usual sweep."""

    model_config = ConfigDict(extra="forbid")

    collectives: list[str] = Field(default_factory=lambda: list(BENCH_DEFAULTS.collectives))
    min_bytes: int = parse_size(GPU_SWEEP.min_bytes)
    max_bytes: int = parse_size(GPU_SWEEP.max_bytes)
    step_factor: int = GPU_SWEEP.step_factor
    step_bytes: int = 0
    dtype: str = BENCH_DEFAULTS.dtype
    op: str = BENCH_DEFAULTS.op
    root: int = BENCH_DEFAULTS.root
    check: bool = BENCH_DEFAULTS.check

    @field_validator("collectives")
    @classmethod
    def _collectives(cls, value: list[str]) -> list[str]:
        return normalize_collectives(value)

    @field_validator("dtype")
    @classmethod
    def _dtype(cls, value: str) -> str:
        return normalize_dtype(value)

    @field_validator("op")
    @classmethod
    def _op(cls, value: str) -> str:
        return normalize_op(value)

    @property
    def wordsize(self) -> int:
        return DTYPE_SIZES[self.dtype]

    def sizes(self) -> list[int]:
        return size_sweep(self.min_bytes, self.max_bytes, self.step_factor, self.step_bytes)

    def redop_for(self, collective: str) -> str:
        """The redop column: the op for reducing collectives and for sendrecv, whose nccl-tests binary
        prints -o too (it runs the op loop without reducing anything); "none" for the others."""
        return self.op if collective in PRINTS_OP else "none"

    def root_for(self, collective: str) -> int:
        return self.root if collective in ROOTED else -1


def normalize_collectives(values: list[str]) -> list[str]:
    """Accept repeats, comma lists, ``all`` and nccl-tests' binary names (``all_reduce_perf``)."""
    names: list[str] = []
    for value in values:
        for raw in value.split(","):
            name = raw.strip().lower().removesuffix("_perf").replace("-", "_")
            if not name:
                continue
            if name == "all":
                names.extend(c for c in COLLECTIVES if c not in names)
                continue
            name = COLLECTIVE_ALIASES.get(name, name)
            if name not in ALL_COLLECTIVES:
                # nccl-tests' `-c 0|1` is its result check; here -c names the collective (docs/cli.md).
                check = "; nccl-tests' -c (check) is --check/--no-check here" if name.isdigit() else ""
                raise UsageError(
                    f"-c/--collective: unknown collective {raw.strip()!r}; "
                    f"choose from {', '.join(ALL_COLLECTIVES)} or all{check}"
                )
            if name not in names:
                names.append(name)
    if not names:
        raise UsageError(f"-c/--collective: empty; choose from {', '.join(COLLECTIVES)} or all")
    return names


def normalize_dtype(value: str) -> str:
    name = DTYPE_ALIASES.get(value.strip().lower(), value.strip().lower())
    if name not in DTYPE_SIZES:
        raise UsageError(f"--dtype: unknown type {value!r}; choose from {', '.join(DTYPE_SIZES)}")
    return name


def normalize_op(value: str) -> str:
    name = value.strip().lower()
    if name not in REDOPS:
        raise UsageError(f"--op: unknown reduction {value!r}; choose from {', '.join(REDOPS)}")
    return name
