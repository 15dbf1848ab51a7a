"""Rendering training results (``TrainResult``, ``TrainAB``): a terminal table, markdown (for
docs/benchmarks.md) and JSON, as ``render_train(document, fmt)``; the HTML report's training section
(``report.train_section``) reuses the lines and cells defined here.

Every rendering states the method next to the numbers: how compute and communication were separated,
where the bytes came from, and how the busbw prediction was made, so a number is never read without
knowing what it measures. What an A/B of two gloo runs may claim is ``train.ab``'s (``ab_caveat``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpufabric.bench.semantics import bus_factor
from gpufabric.report.formats import Format
from gpufabric.train.ab import ab_caveat, fabric_label
from gpufabric.train.model_shape import step_bytes
from gpufabric.train.predict import agreement_verdict
from gpufabric.train.result import TrainAB, TrainDocument, TrainResult
from gpufabric.units import human_size

if TYPE_CHECKING:
    from gpufabric.train.runner import PreparedTrainRun

TRAIN_FORMATS: tuple[Format, ...] = (Format.TABLE, Format.JSON, Format.MARKDOWN)

METHOD = (
    "step = forward + backward with gradient sync + optimizer step; compute = the same step in the "
    "communication-free twin; exposed comm = end of backward with sync - end of backward in the twin; "
    "wire = sum over the step's collectives of size x bus factor / busbw(size); predicted = the part of "
    "the wire time the overlap model leaves exposed; agreement = measured exposed / predicted; comm share "
    "= wire / step; MFU = tokens/s per GPU x FLOPs per token (PaLM's count) / the GPU's dense bf16 peak"
)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def what_runs(run: PreparedTrainRun) -> str:
    """The line printed before a run: the model, the tokens of a step, the bytes each rank communicates."""
    config, n = run.config, run.program.nranks
    on_gpu = run.program.gpus_per_node > 0
    spec = config.model
    sizes = step_bytes(spec, strategy=config.strategy, on_gpu=on_gpu)
    comm = ", ".join(
        f"{kind.replace('_', '-')} {human_size(size)} (on the wire per rank "
        f"{human_size(int(size * bus_factor(kind, n)))})"
        for kind, size in sizes.items()
    )
    tokens = config.batch_size * spec.seq_len
    return (
        f"{config.model_name}: {spec.parameter_count() / 1e6:,.1f}M parameters ({spec.layers} layers, hidden "
        f"{spec.hidden}, {spec.heads} heads, seq {spec.seq_len}, vocab {spec.vocab:,}); {config.strategy} on "
        f"{n} rank(s), {'bf16 GPU' if on_gpu else 'fp32 CPU'}; {tokens:,} tokens per rank per step "
        f"({tokens * n:,} per step); per step: {comm if n > 1 else 'no communication (one rank)'}"
    )


def describe(result: TrainResult) -> list[str]:
    spec = result.model
    n = result.world_size
    wire = sum(
        int(size * bus_factor(kind, n))
        for kind, size in (
            ("all_reduce", result.comm.bytes_all_reduced),
            ("all_gather", result.comm.bytes_all_gathered),
            ("reduce_scatter", result.comm.bytes_reduce_scattered),
        )
    )
    return [
        f"model {result.model_name} ({spec.layers} layers, hidden {spec.hidden}, {spec.heads} heads, "
        f"seq {spec.seq_len}, vocab {spec.vocab:,}): {result.parameters:,} parameters, {result.dtype}; "
        f"{result.tokens_per_step:,} tokens per step; each rank sends {human_size(wire)} per step",
        f"{result.strategy} on {result.world_size} rank(s) ({result.metadata.backend}), batch "
        f"{result.batch_size} per rank = {result.tokens_per_step:,} tokens per step, "
        f"{len(result.step.samples_ms)} timed steps",
        peak_line(result),
    ]


def peak_line(result: TrainResult) -> str:
    peak = result.peak
    if peak is None or peak.tflops is None:
        missing = peak.missing if peak is not None else "the GPU's model name (not recorded)"
        return f"MFU: none, a fact is missing: {missing}"
    flops = result.model.flops_per_token()
    return (
        f"MFU against the {peak.part} dense bf16 peak, {peak.tflops:g} TFLOP/s ({peak.source}), at "
        f"{flops / 1e9:.2f} GFLOPs per token"
    )


def split_line(result: TrainResult) -> str:
    """The compute/communication split of a step, with where each number comes from."""
    phases = result.phases
    if phases is None:
        return f"split: step {result.step.mean_ms:.2f} ms, compute {result.compute.mean_ms:.2f} ms"
    optimizer = result.step.mean_ms - phases.synced_backward.mean_ms
    twin_optimizer = result.compute.mean_ms - phases.compute_backward.mean_ms
    return (
        f"split: step {result.step.mean_ms:.2f} ms = forward+backward {phases.synced_backward.mean_ms:.2f} "
        f"(twin {phases.compute_backward.mean_ms:.2f}, so {result.comm_ms:.2f} exposed communication) + "
        f"optimizer {optimizer:.2f} (twin {twin_optimizer:.2f})"
    )


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
    latency = f", launch/sync {p.latency_total_ms:.2f} ms of it" if p.latency_total_ms else ""
    return (
        f"communication: {p.wire_ms:.2f} ms on the wire at busbw {p.effective_busbw_gbs:.2f} GB/s "
        f"({p.busbw_source}{latency}); predicted exposed {p.predicted_comm_ms:.2f} ms (forward stalls "
        f"{p.forward_stall_ms:.2f}), measured {p.measured_comm_ms:.2f} ms = {p.agreement_pct:.0f}% of "
        f"predicted"
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
