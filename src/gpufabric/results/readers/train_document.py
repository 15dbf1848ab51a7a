"""A train-bench document where a benchmark run is expected: told apart by its ``kind``, so the readers
can refuse it in one line that names the command showing it, instead of a schema error.

Only the recognition lives here; the document itself (its model and reader) is ``train.result``'s, which
imports ``is_train_document`` from here: results sits below train and never imports it.
"""

from __future__ import annotations

from pathlib import Path

from gpufabric.results.io import sniff_json

TRAIN_KINDS = ("train", "train-ab")
"""The ``kind`` of a ``train.json`` (one run) and of a train-bench A/B document."""
SHOW_COMMAND = "gpufabric train-bench --show"
_SNIFF_LIMIT = 64 << 20  # a train document is kilobytes; never parse a large bench JSON twice


def is_train_document(data: object) -> bool:
    """True for parsed JSON whose ``kind`` is a train-bench document's."""
    return isinstance(data, dict) and data.get("kind") in TRAIN_KINDS


def is_train_result(path: Path) -> bool:
    """True when ``path`` is a train-bench document (``train.json`` or an A/B), so a reader of benchmark
    results can refuse it with ``not_a_bench_result`` instead of a schema error."""
    return is_train_document(sniff_json(path, _SNIFF_LIMIT))


def not_a_bench_result(path: Path) -> str:
    """The one line for a train-bench document given where a benchmark result is expected."""
    return (
        f"{path} is a train-bench result, not a collective benchmark; view it with `{SHOW_COMMAND} {path}` "
        f"or put it in an HTML report with `gpufabric report {path}`"
    )
