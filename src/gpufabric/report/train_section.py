"""The HTML report's training section: ``train_section(documents)`` for ``TrainResult`` / ``TrainAB`` files.

``report.html.build_report(..., training=...)`` appends it after the benchmark runs; ``gpufabric report``
finds training documents among its inputs with ``gpufabric.train.result.sniff_train_document``.
Every value is escaped by the shared ``html_sections.table``; environments are shown through
``redact_env`` again, as the rest of the report.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from gpufabric.redact import redact_env
from gpufabric.report.html_sections import key_values, table
from gpufabric.report.train_lines import (
    agreement_line,
    payload_line,
    prediction_line,
    split_line,
    transport_line,
)
from gpufabric.report.train_render import HEAD, METHOD, row_cells
from gpufabric.train.ab import ab_caveat, fabric_label
from gpufabric.train.result import TrainAB, TrainDocument, TrainResult


def _runs(document: TrainDocument) -> list[TrainResult]:
    return [document.on, document.off] if isinstance(document, TrainAB) else [document]


def train_label(document: TrainDocument) -> str:
    return _runs(document)[0].label


def train_section(documents: Sequence[TrainDocument]) -> str:
    """``<h2>Training</h2>``, one table per document, the bytes and prediction lines, and the method."""
    if not documents:
        return ""
    out = ["<h2>Training</h2>"]
    for document in documents:
        runs = _runs(document)
        out.append(f"<h3>{escape(runs[0].label)}</h3>")
        out.append(table(HEAD, [row_cells(r) for r in runs], numeric_from=1))
        if isinstance(document, TrainAB):
            out.append(
                f'<p class="note">Speed-up with the fabric on ({escape(fabric_label(document))}): '
                f"{document.speedup:.2f}x tokens/s over {document.rounds} round(s). "
                f"Fabric off: {escape(document.off_description)}</p>"
            )
            caveat = ab_caveat(document)
            if caveat:
                out.append(f'<p class="note"><strong>{escape(caveat)}</strong></p>')
        items = []
        for run in runs:
            tag = f"{run.profile}: " if run.profile else ""
            lines = [
                payload_line(run), split_line(run), prediction_line(run), agreement_line(run),
                transport_line(run),
            ]  # fmt: skip
            items += [f"<li>{escape(tag + line)}</li>" for line in lines if line]
        out.append("<ul>" + "".join(items) + "</ul>")
        for run in runs:
            meta = run.metadata
            out.append(
                key_values(
                    {
                        "run": run.profile or run.label,
                        "hosts": ", ".join(meta.hosts),
                        "torch": meta.torch_version or "",
                        "NCCL": meta.nccl_version or "",
                        "env": " ".join(f"{k}={v}" for k, v in redact_env(meta.env).items()),
                    }
                )
            )
    out.append(f'<p class="note">Method: {escape(METHOD)}.</p>')
    return "\n".join(out)
