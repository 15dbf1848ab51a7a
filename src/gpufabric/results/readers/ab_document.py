"""The one model of a ``gpufabric bench --ab`` document (``ab.json``, or ``--ab --format json``): what was
measured, pooled per side, and the verdict in words.

``ABDocument`` is what any reader needs (``show``, ``compare``, ``report``): the fabric switched (or
``config`` for two configurations), ``runs`` (each side pooled, ``ABRuns``: ``runs.on`` the first slot,
``runs.off`` the second and the baseline; their labels are the sides' names) and ``verdict``. The A/B
judge's report (``analysis.ab_judge.ABReport``) is this model plus the judgement (comparison, each
side's proof, the equivalence verdict), so the document is written and read through one definition;
reading ignores the judgement's fields, which only the analysis layer knows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gpufabric.errors import InputError
from gpufabric.results.io import sniff_json
from gpufabric.results.model import RunResult

_SNIFF_LIMIT = 256 << 20  # an A/B document holds two pooled runs; anything larger is not one


class ABRound(BaseModel):
    """One job of the A/B: which side, in which round, where its run directory is."""

    model_config = ConfigDict(extra="forbid")

    round: int
    side: str
    run_dir: str


class ABRuns(BaseModel):
    """What the A/B measured: each side pooled over its rounds, and the jobs in the order they ran."""

    model_config = ConfigDict(extra="forbid")

    fabric: str
    on: RunResult
    off: RunResult
    on_description: str = ""
    off_description: str = ""
    off_env: dict[str, str] = Field(default_factory=dict)
    off_unset: list[str] = Field(default_factory=list)
    nodes: int = 1
    rounds: int
    order: list[ABRound]
    root: str = Field(description="directory holding one run directory per job and the pooled results")


class ABDocument(BaseModel):
    """One A/B as written: both sides and the verdict in words (the judgement's fields are ignored)."""

    model_config = ConfigDict(extra="ignore")

    fabric: str = Field(description="the fabric the A/B measured, or 'config' for two configurations")
    runs: ABRuns
    verdict: list[str] = Field(default_factory=list, description="the verdict in words")

    @property
    def on(self) -> RunResult:
        return self.runs.on

    @property
    def off(self) -> RunResult:
        return self.runs.off

    @property
    def pooled(self) -> list[RunResult]:
        """The first slot's side first, the second (the baseline) last, as the judge compared them."""
        return [self.runs.on, self.runs.off]


def is_ab_document(data: Any) -> bool:
    runs = data.get("runs") if isinstance(data, dict) else None
    return isinstance(runs, dict) and "on" in runs and "off" in runs and "fabric" in data


def sniff_ab_document(path: Path) -> ABDocument | None:
    """The A/B document in ``path`` if it is one, else None (left to the other readers)."""
    data = sniff_json(path, _SNIFF_LIMIT)
    if not is_ab_document(data):
        return None
    try:
        return ABDocument.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        message = " ".join(str(first["msg"]).split())
        raise InputError(f"{path}: invalid `bench --ab` document at {where}: {message}") from exc


def not_a_single_run(path: Path) -> InputError:
    """The one line for an A/B document given where one benchmark run is expected."""
    return InputError(
        f"{path} is a `bench --ab` document holding two runs (fabric-on and fabric-off, or sides A and B); "
        f"render it with `gpufabric report {path}`, or compare the pooled sides: `gpufabric compare "
        "ROOT/fabric-on.json ROOT/fabric-off.json` (ROOT: the A/B's run directory, named in the document; "
        "an A/B of two configurations names its files after its sides, A.json and B.json by default)"
    )
