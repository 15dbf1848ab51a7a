"""The two pooled runs inside a ``gpufabric bench --ab`` document (``ab.json``, or ``--ab --format json``).

That document is the A/B judge's whole report (``analysis.ab_judge.ABReport``); the results layer only
needs what was measured, so this reads the fabric name, the verdict lines and the two sides
(``runs.on`` = fabric-on, ``runs.off`` = fabric-off, the baseline) as plain ``RunResult``s, without
depending on the analysis layer's model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpufabric.errors import InputError
from gpufabric.results.io import result_from_dict, sniff_json
from gpufabric.results.model import RunResult

_SNIFF_LIMIT = 256 << 20  # an A/B document holds two pooled runs; anything larger is not one


@dataclass(frozen=True)
class ABDocument:
    """One fabric A/B: both sides and the judge's verdict in words."""

    fabric: str
    on: RunResult
    off: RunResult
    verdict: list[str] = field(default_factory=list)

    @property
    def runs(self) -> list[RunResult]:
        """fabric-on first, fabric-off (the baseline) last, as the judge compared them."""
        return [self.on, self.off]


def is_ab_document(data: Any) -> bool:
    runs = data.get("runs") if isinstance(data, dict) else None
    return isinstance(runs, dict) and "on" in runs and "off" in runs and "fabric" in data


def sniff_ab_document(path: Path) -> ABDocument | None:
    """The A/B document in ``path`` if it is one, else None (left to the other readers)."""
    data = sniff_json(path, _SNIFF_LIMIT)
    if not is_ab_document(data):
        return None
    runs = data["runs"]
    verdict = data.get("verdict")
    return ABDocument(
        fabric=str(data["fabric"]),
        on=result_from_dict(runs["on"], source=f"{path} (runs.on)"),
        off=result_from_dict(runs["off"], source=f"{path} (runs.off)"),
        verdict=[str(line) for line in verdict] if isinstance(verdict, list) else [],
    )


def not_a_single_run(path: Path) -> InputError:
    """The one line for an A/B document given where one benchmark run is expected."""
    return InputError(
        f"{path} is a `bench --ab` document holding two runs (fabric-on and fabric-off, or sides A and B); "
        f"render it with `gpufabric report {path}`, or compare the pooled sides: `gpufabric compare "
        "ROOT/fabric-on.json ROOT/fabric-off.json` (ROOT: the A/B's run directory, named in the document; "
        "an A/B of two configurations names its files after its sides, A.json and B.json by default)"
    )
