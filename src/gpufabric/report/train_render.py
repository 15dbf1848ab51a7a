"""Rendering training results (``TrainResult``, ``TrainAB``): a terminal table, markdown (for
docs/benchmarks.md) and JSON, as ``render_train(document, fmt)``; the HTML report's training section
(``report.train_section``) reuses the lines and cells defined here.

Every rendering states the method next to the numbers: how compute and communication were separated,
where the bytes came from, and how the busbw prediction was made, so a number is never read without
knowing what it measures. What an A/B of two gloo runs may claim is ``train.ab``'s (``ab_caveat``).
"""

from __future__ import annotations

from gpufabric.report.formats import Format
from gpufabric.report.train_lines import (
    agreement_line,
    describe,
    payload_line,
    prediction_line,
    split_line,
    transport_line,
)
from gpufabric.train.ab import ab_caveat, fabric_label
from gpufabric.train.result import TrainAB, TrainDocument, TrainResult
from gpufabric.units import human_size

METHOD = (
    "step = forward + backward with gradient sync + optimizer step; compute = the same step in the "
    "communication-free twin; exposed comm = DDP: median step - the twin's median, back to back in "
    "alternating blocks; FSDP: end of backward with sync - end of backward in the twin; "
    "wire = sum over the step's collectives of size x bus factor / busbw(size); predicted = the part of "
    "the wire time the overlap model leaves exposed (or the host path's bound, the larger), for DDP plus "
    "waiting for every rank's step (the twin's per-step slowest rank - its slowest rank's steps); "
    "agreement = measured exposed / predicted; comm share = wire / step; MFU = tokens/s per GPU x FLOPs "
    "per token (PaLM's count) / the GPU's dense bf16 peak"
)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def row_cells(result: TrainResult) -> list[str]:
    p = result.prediction
    mfu = result.mfu
    return [
        result.profile or result.label,
        f"{result.tokens_per_s:,.0f}",
        _ms(result.step.mean_ms),
        _ms(result.compute.mean_ms),
        _ms(p.wire_ms if p else None),
        _ms(result.comm_ms),
        _ms(p.predicted_comm_ms if p else None),
        f"{p.agreement_pct:.0f}%" if p else "-",
        _pct(p.wire_ms / result.step.mean_ms if p and result.step.mean_ms > 0 else None),
        _pct(mfu),
        _pct(result.scaling.efficiency if result.scaling else None),
    ]


HEAD = [
    "run",
    "tokens/s",
    "step ms",
    "compute ms",
    "wire ms",
    "exposed ms",
    "predicted ms",
    "agreement",
    "comm share",
    "MFU",
    "scaling eff.",
]


def title(document: TrainDocument) -> str:
    """The run's label, without the profile suffix an A/B side carries."""
    first = document.on if isinstance(document, TrainAB) else document
    return first.label.removesuffix(f" {first.profile}") if first.profile else first.label


def _runs(document: TrainDocument) -> list[TrainResult]:
    return [document.on, document.off] if isinstance(document, TrainAB) else [document]


def _speedup_line(document: TrainDocument) -> list[str]:
    if not isinstance(document, TrainAB):
        return []
    caveat = ab_caveat(document)
    interval = (
        f" [95% {document.speedup_low:.3g}-{document.speedup_high:.3g}]"
        if document.speedup_low is not None and document.speedup_high is not None
        else ""
    )
    lines = [
        f"speed-up, fabric on / off ({fabric_label(document)}): {document.speedup:.2f}x tokens/s{interval}, "
        f"{document.rounds} round(s) in ABBA order, every step of every round pooled",
    ]
    if document.busbw:
        shown = ", ".join(
            f"{b.kind.replace('_', '-')} {human_size(b.size_bytes)} {b.speedup:.2f}x "
            f"({b.on_gbs:.1f} vs {b.off_gbs:.1f} GB/s)"
            for b in document.busbw[:4]
        )
        lines.append(f"busbw speed-up at the step's own sizes (each side's probe): {shown}")
    if document.jobs:
        lines.append(
            "rounds: "
            + "; ".join(f"r{j.round} {j.side} {j.tokens_per_s:,.0f} tokens/s" for j in document.jobs)
        )
    lines += [*([caveat] if caveat else []), f"fabric-off: {document.off_description}"]
    return lines


def render_table(document: TrainDocument) -> str:
    runs = _runs(document)
    rows = [HEAD, *(row_cells(r) for r in runs)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(HEAD))]
    lines = [f"# gpufabric train-bench: {title(document)}"]
    lines += [f"# {line}" for line in describe(runs[0])]
    lines.append("#")
    for row in rows:
        cells = [row[0].ljust(widths[0]), *(c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True))]
        lines.append("  ".join(cells).rstrip())
    lines.append("")
    for result in runs:
        tag = f"[{result.profile}] " if result.profile else ""
        lines.append(f"# {tag}{payload_line(result)}")
        lines.append(f"# {tag}{split_line(result)}")
        lines.append(f"# {tag}{prediction_line(result)}")
        lines.append(f"# {tag}{transport_line(result)}")
        agreement = agreement_line(result)
        if agreement:
            lines.append(f"# {tag}{agreement}")
    lines += [f"# {line}" for line in _speedup_line(document)]
    lines.append(f"# method: {METHOD}; {runs[0].compute_method}")
    return "\n".join(lines) + "\n"


def render_markdown(document: TrainDocument) -> str:
    runs = _runs(document)
    lines = [f"**{title(document)}**: " + "; ".join(describe(runs[0])), ""]
    lines.append("| " + " | ".join(HEAD) + " |")
    lines.append("|" + "|".join(["---", *["---:"] * (len(HEAD) - 1)]) + "|")
    lines += ["| " + " | ".join(row_cells(r)) + " |" for r in runs]
    lines.append("")
    for line in _speedup_line(document):
        lines.append(f"- {line}")
    for result in runs:
        tag = f"{result.profile}: " if result.profile else ""
        lines.append(f"- {tag}{payload_line(result)}")
        lines.append(f"- {tag}{split_line(result)}")
        lines.append(f"- {tag}{prediction_line(result)}")
        lines.append(f"- {tag}{transport_line(result)}")
        agreement = agreement_line(result)
        if agreement:
            lines.append(f"- {tag}{agreement}")
    return "\n".join(lines) + "\n"


def render_train(document: TrainDocument, fmt: Format) -> str:
    """``document`` in ``fmt`` (one of ``TRAIN_FORMATS``): the table, markdown, or the JSON document."""
    if fmt == Format.JSON:
        return document.model_dump_json(indent=2) + "\n"
    if fmt == Format.MARKDOWN:
        return render_markdown(document)
    return render_table(document)
