"""The output formats of every command's ``--format``, named once. Each command accepts a subset
(``choices``): a run's table also as CSV, an A/B or tune report as markdown or JSON, a catalog as YAML,
a plan also as one kind of document alone (``sky``, ``k8s``, ``sbatch``, ``env``).

Which formats a document renders to is its renderer's ``<THING>_FORMATS`` (``report.renderers``).
"""

from __future__ import annotations

from enum import Enum


class Format(str, Enum):
    """One word per output format; the value is what the user types after ``--format``."""

    TABLE = "table"
    JSON = "json"
    CSV = "csv"
    MARKDOWN = "markdown"
    YAML = "yaml"
    TEXT = "text"
    # A plan's documents alone, each ready for its tool (``planner.EXPORT_KINDS``).
    SKY = "sky"
    K8S = "k8s"
    SBATCH = "sbatch"
    ENV = "env"


def choices(*formats: Format) -> tuple[str, ...]:
    """The words a command's ``--format`` accepts, in the order its help lists them."""
    return tuple(f.value for f in formats)
