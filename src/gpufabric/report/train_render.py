"""Rendering training results (``TrainResult``, ``TrainAB``): a terminal table, markdown (for
docs/benchmarks.md) and JSON, as ``render_train(document, fmt)``; the HTML report's training section
(``report.train_section``) reuses the lines and cells defined here.

Every rendering states the method next to the numbers: how compute and communication were separated,
where the bytes came from, and how the busbw prediction was made, so a number is never read without
knowing what it measures. What an A/B of two gloo runs may claim is ``train.ab``'s (``ab_caveat``).
"""

from __future__ import annotations

from gpufabric.report.formats import Format
from gpufabric.train.ab import ab_caveat, fabric_label
from gpufabric.train.predict import agreement_verdict
from gpufabric.train.result import TrainAB, TrainDocument, TrainResult
from gpufabric.units import human_size

TRAIN_FORMATS: tuple[Format, ...] = (Format.TABLE, Format.JSON, Format.MARKDOWN)

METHOD = (
    "step = forward + backward with gradient sync + optimizer step; compute = the same steps without "
    "gradient communication; exposed comm = step - compute (the part of communication that backward "
    "compute did not hide); predicted comm = sum over the step's collectives of size x bus factor / "
    "busbw(size); agreement = measured exposed comm / predicted comm"
)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def describe(result: TrainResult) -> list[str]:
    spec = result.model
    return [
        f"model {result.model_name} ({spec.layers} layers, hidden {spec.hidden}, {spec.heads} heads, "
        f"seq {spec.seq_len}, vocab {spec.vocab}): {result.parameters:,} parameters, {result.dtype}",
        f"{result.strategy} on {result.world_size} rank(s) ({result.metadata.backend}), batch "
        f"{result.batch_size} per rank = {result.global_batch} per step, {len(result.step.samples_ms)} "
        "timed steps",
    ]


def payload_line(result: TrainResult) -> str:
    comm = result.comm
    if not comm.calls:
        return "bytes per step: none (one rank: nothing to communicate)"
    parts = []
    if comm.bytes_all_reduced:
        parts.append(f"all-reduce {human_size(comm.bytes_all_reduced)}")
    if comm.bytes_reduce_scattered:
        parts.append(f"reduce-scatter {human_size(comm.bytes_reduce_scattered)}")
    if comm.bytes_all_gathered:
        parts.append(f"all-gather {human_size(comm.bytes_all_gathered)}")
    return f"bytes per step: {', '.join(parts)} in {len(comm.calls)} call(s) ({comm.method})"


def prediction_line(result: TrainResult) -> str:
    p = result.prediction
    if p is None:
        return "prediction: none (one rank, or nothing was probed)"
    return (
        f"communication: predicted {p.predicted_comm_ms:.2f} ms from busbw {p.effective_busbw_gbs:.2f} GB/s "
        f"({p.busbw_source}); measured {p.measured_comm_ms:.2f} ms exposed = {p.agreement_pct:.0f}% of "
        f"predicted; share of step predicted {_pct(p.predicted_share)} (no overlap), measured "
        f"{_pct(p.measured_share)}"
    )


def transport_line(result: TrainResult) -> str:
    """What NCCL's own logs say the run used: the proof behind an A/B arm's name."""
    att = result.attestation
    if att is None or not att.channel_links_total:
        why = "no NCCL logs (a gloo run)" if att is None else "no NCCL channel lines in its logs"
        return f"transport: not attested, {why}"
    links = ", ".join(f"{t} x{n}" for t, n in sorted(att.transports.items(), key=lambda kv: -kv[1])[:4])
    network = att.network or "not named"
    return f"transport (from NCCL's logs): channels via {links}; network {network}"


def agreement_line(result: TrainResult) -> str | None:
    """The prediction's agreement in words (``predict.agreement_verdict``), or None without a prediction."""
    p = result.prediction
    if p is None:
        return None
    return f"agreement {p.agreement_pct:.0f}% (measured / predicted comm): {agreement_verdict(p)}"


def row_cells(result: TrainResult) -> list[str]:
    p = result.prediction
    return [
        result.profile or result.label,
        f"{result.samples_per_s:,.1f}",
        f"{result.tokens_per_s:,.0f}",
        _ms(result.step.mean_ms),
        _ms(result.compute.mean_ms),
        _ms(result.comm_ms),
        _ms(p.predicted_comm_ms if p else None),
        f"{p.agreement_pct:.0f}%" if p else "-",
        f"{p.effective_busbw_gbs:.2f}" if p else "-",
        _pct(result.comm_ms / result.step.mean_ms if result.step.mean_ms > 0 else None),
        _pct(result.scaling.efficiency if result.scaling else None),
    ]


HEAD = [
    "run",
    "samples/s",
    "tokens/s",
    "step ms",
    "compute ms",
    "comm ms",
    "predicted ms",
    "agreement",
    "busbw GB/s",
    "comm share",
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
    return [
        f"speed-up, fabric on / off ({fabric_label(document)}): {document.speedup:.2f}x samples/s",
        *([caveat] if caveat else []),
        f"fabric-off: {document.off_description}",
    ]


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
