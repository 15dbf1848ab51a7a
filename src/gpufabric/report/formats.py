"""The output formats of every command's ``--format``, named once. Each command accepts a subset
(``choices``): a run's table also as CSV, an A/B or tune report as markdown or JSON, a catalog as YAML.
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


def choices(*formats: Format) -> tuple[str, ...]:
    """The words a command's ``--format`` accepts, in the order its help lists them."""
    return tuple(f.value for f in formats)
