"""The calibration corpus: published busbw figures, each with the URL where it is printed.

``expect/data/published.yaml`` is a list of ``PublishedFigure`` entries. The loader is strict: an unknown
key, a missing field, a duplicate id, a healthy figure that names a cause or a degraded one that names
none is one ``InputError`` line naming the file, the entry and the field. Healthy figures not marked
``holdout`` calibrate the efficiency bands (``calibration``); held-out and degraded ones test them
(``benchmarks/expect_holdout.py``).
"""

from __future__ import annotations

import datetime as dt
from functools import cache
from importlib import resources
from pathlib import Path as FilePath
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from gpufabric.collectives import CollectiveName
from gpufabric.errors import InputError
from gpufabric.expect.regimes import Path, Regime

Cause = Literal[
    "one-nic", "socket-fallback", "missing-gpu", "no-gdr", "pcie-bound", "slow-rank", "launch-bound"
]
NicKindName = Literal["efa", "infiniband", "roce", "ethernet"]
DATA_FILE = "published.yaml"
REPOSITORY_FILES = ("docs/", "benchmarks/", "tests/fixtures/")
"""Rows measured on this project's GPU machines cite the repository file that records them."""


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class PublishedNvLink(_Strict):
    generation: int | None = Field(default=None, ge=1, le=6)
    links_per_gpu: int | None = Field(default=None, ge=0)
    link_gbytes_per_s: float | None = Field(default=None, gt=0)
    nvswitch: bool | None = None


class PublishedNics(_Strict):
    """The fabric NICs of each node (for a degraded figure: those the node has, not those it used)."""

    kind: NicKindName
    count: int | None = Field(default=None, ge=0, description="None when no citable page gives it")
    rate_gbps: float | None = Field(default=None, gt=0, description="one NIC's line rate, Gbit/s")


class PublishedFigure(_Strict):
    """One busbw figure as its source prints it."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$")
    url: str = Field(
        description="where the figure is printed: https://..., or a docs/, benchmarks/ or tests/fixtures/ "
        "file here"
    )
    source: str = Field(min_length=1, description="the source's public name")
    date: str | None = Field(default=None, description="publication or measurement date, YYYY[-MM[-DD]]")
    instance_type: str | None = None
    gpu: str
    gpus_per_node: int = Field(ge=1)
    nodes: int = Field(ge=1)
    hosts: int | None = Field(
        default=None,
        ge=1,
        description="physical hosts when NCCL's nodes are virtual (NCCL_HOSTID); else nodes",
    )
    gpus_per_host: int | None = Field(
        default=None,
        ge=1,
        description="GPUs of the host when NCCL's nodes are virtual (4 virtual nodes of 1 GPU: 4)",
    )
    ranks_per_process: int | None = Field(
        default=None,
        ge=1,
        description="ranks each process drives: 1 under mpirun -np N -g 1, N for nccl-tests -g N",
    )
    series: str | None = Field(
        default=None, description="rows of one run at several sizes share it (the size curve's fit)"
    )
    nvlink: PublishedNvLink | None = None
    nics: PublishedNics | None = None
    node_nics: PublishedNics | None = Field(
        default=None,
        description="degraded figures without an instance type: the fabric NICs the nodes have (the same "
        "source's healthy run on the same nodes), which the run did not use",
    )
    path: Path
    regime: Regime | None = Field(default=None, description="the algorithm, when the source says")
    collective: CollectiveName
    size_bytes: int = Field(gt=0)
    busbw_gbps: float = Field(gt=0)
    nccl: str | None = None
    library: Literal["nccl", "hccl"] = Field(
        default="nccl",
        description="the collective library the source names; the model covers NCCL, so figures of another "
        "(Habana's HCCL on Gaudi) are kept as published and not judged",
    )
    env: dict[str, str] = Field(default_factory=dict, description="NCCL settings that shaped the figure")
    health: Literal["healthy", "degraded"]
    cause: Cause | None = None
    holdout: bool = False
    notes: str = ""

    @field_validator("date", mode="before")
    @classmethod
    def _date_text(cls, value: object) -> object:
        # YAML reads 2024-06-01 as a date: keep the text the author wrote.
        return value.isoformat() if isinstance(value, dt.date) else value

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        if not value.startswith(("https://", *REPOSITORY_FILES)):
            raise ValueError(
                f"{value!r} is neither an https:// URL nor a docs/, benchmarks/ or tests/fixtures/ file of "
                "this repository"
            )
        return value

    @model_validator(mode="after")
    def _cause_matches_health(self) -> PublishedFigure:
        if self.health == "healthy" and self.cause is not None:
            raise ValueError(f"a healthy figure has no cause (got {self.cause!r}); use health: degraded")
        if self.health == "degraded" and self.cause is None:
            raise ValueError("a degraded figure names its cause (one-nic, socket-fallback, ...)")
        if self.node_nics is not None and self.health != "degraded":
            raise ValueError("node_nics names what a degraded run's nodes have; a healthy figure uses nics")
        if self.path is Path.NET and self.nics is None:
            raise ValueError("a NET figure names the nodes' fabric nics (kind, count, rate_gbps)")
        return self

    @property
    def physical_hosts(self) -> int:
        return self.hosts if self.hosts is not None else self.nodes


def parse_published(text: str, where: str = DATA_FILE) -> tuple[PublishedFigure, ...]:
    """Validate the corpus' text; anything wrong is one ``InputError`` line naming ``where``."""
    try:
        document: Any = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" line {mark.line + 1}" if mark is not None else ""
        raise InputError(f"{where}{line}: not valid YAML ({getattr(exc, 'problem', None) or exc})") from None
    if not isinstance(document, list):
        raise InputError(f"{where}: expected a list of figures (- id: ...), got {type(document).__name__}")
    figures: list[PublishedFigure] = []
    seen: set[str] = set()
    for index, raw in enumerate(document):
        name = raw.get("id", f"#{index}") if isinstance(raw, dict) else f"#{index}"
        try:
            figure = PublishedFigure.model_validate(raw)
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(p) for p in first["loc"]) or "entry"
            message = " ".join(first["msg"].split())
            raise InputError(f"{where}: figure {name!r}: {field}: {message}") from None
        if figure.id in seen:
            raise InputError(f"{where}: figure id {figure.id!r} appears twice; ids are unique")
        seen.add(figure.id)
        figures.append(figure)
    return tuple(figures)


@cache
def load_published(path: FilePath | None = None) -> tuple[PublishedFigure, ...]:
    """The shipped corpus (or the file at ``path``), validated; cached: it does not change in a process."""
    if path is not None:
        return parse_published(path.read_text(encoding="utf-8"), str(path))
    text = resources.files("gpufabric.expect").joinpath("data", DATA_FILE).read_text(encoding="utf-8")
    return parse_published(text, f"gpufabric/expect/data/{DATA_FILE}")


# The one citation of what a missing EFA interface costs: two of the published figures above.
_ONE_EFA, _FOUR_EFA = "p4d-2n-all_reduce-efa1-vm", "p4d-2n-all_reduce-efa4-vm"


def efa_count_figures() -> str:
    """What the messages about unattached EFA interfaces cite, from the published figures (SkyPilot's EFA
    guide, https://docs.skypilot.co/en/latest/examples/performance/aws_efa.html, AWS VM table at 2 GB):
    'SkyPilot's EFA guide: 2x p4d gave 20 GB/s with 1 EFA, 78 GB/s with 4'."""
    by_id = {figure.id: figure for figure in load_published()}
    one, four = by_id[_ONE_EFA], by_id[_FOUR_EFA]
    nics = [figure.nics.count if figure.nics else None for figure in (one, four)]
    return (
        f"SkyPilot's EFA guide: {one.nodes}x p4d gave {one.busbw_gbps:.0f} GB/s with {nics[0]} EFA, "
        f"{four.busbw_gbps:.0f} GB/s with {nics[1]}"
    )
