"""The output formats of every command's ``--format``, named once. Each command accepts a subset
(``choices``): a run's table also as CSV, an A/B or tune report as markdown or JSON, a catalog as YAML,
a plan also as one kind of document alone (``sky``, ``k8s``, ``sbatch``, ``env``).

Which formats a document renders to is its ``<THING>_FORMATS`` below, which its renderer and its
command's ``--format`` help both read (``report.renderers`` pairs them). They live here, not beside each
renderer, because every command module names them when ``gpufabric --help`` builds its help: importing a
renderer there would import its document models and numpy for every command (issue 36).
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


# What each document renders to, in the order its command's help lists them.
AB_FORMATS: tuple[Format, ...] = (Format.TABLE, Format.MARKDOWN, Format.JSON)
CAPABILITIES_FORMATS: tuple[Format, ...] = (Format.TABLE, Format.JSON)
CATALOG_FORMATS: tuple[Format, ...] = (Format.TABLE, Format.YAML, Format.JSON)
CERTIFY_FORMATS: tuple[Format, ...] = (Format.TABLE, Format.JSON)
CLUSTER_PLAN_FORMATS: tuple[Format, ...] = (Format.YAML, Format.TABLE, Format.JSON, Format.ENV)
COMPARE_FORMATS: tuple[Format, ...] = (Format.TABLE, Format.MARKDOWN, Format.CSV, Format.JSON)
DOCTOR_FORMATS: tuple[Format, ...] = (Format.TABLE, Format.JSON)
EXPECT_FORMATS: tuple[Format, ...] = (Format.TEXT, Format.JSON, Format.MARKDOWN)
INSPECTOR_FORMATS: tuple[Format, ...] = (Format.TABLE, Format.JSON)
ISOLATE_FORMATS: tuple[Format, ...] = (Format.TABLE, Format.JSON)
LAUNCH_PLAN_FORMATS: tuple[Format, ...] = (Format.TEXT, Format.JSON)
NODES_FORMATS: tuple[Format, ...] = (Format.TABLE, Format.JSON, Format.YAML)
# The whole plan, its table, then each of the planner's EXPORT_KINDS alone (tests/report checks they agree).
PLAN_FORMATS: tuple[Format, ...] = (
    Format.YAML, Format.TABLE, Format.SKY, Format.K8S, Format.SBATCH, Format.ENV, Format.JSON
)  # fmt: skip
PREPARED_FORMATS: tuple[Format, ...] = (Format.TEXT, Format.JSON)
RUN_FORMATS: tuple[Format, ...] = (Format.TABLE, Format.JSON, Format.CSV, Format.MARKDOWN)
SNAPSHOT_FORMATS: tuple[Format, ...] = (Format.TEXT, Format.JSON)
TRAIN_FORMATS: tuple[Format, ...] = (Format.TABLE, Format.JSON, Format.MARKDOWN)
TUNE_FORMATS: tuple[Format, ...] = (Format.TABLE, Format.MARKDOWN, Format.JSON)
WATCH_FORMATS: tuple[Format, ...] = (Format.TABLE, Format.JSON)
