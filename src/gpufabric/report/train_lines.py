"""The lines that say what a training run was and what it measured: ``what_runs`` (before a run: the
model, the tokens of a step, the bytes each rank communicates), ``describe``, the peak behind MFU, the
compute/communication split, the bytes, the prediction and its agreement, and the transport NCCL's logs
prove. ``train_render`` (terminal, markdown) and ``train_section`` (HTML) print them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpufabric.bench.semantics import bus_factor
from gpufabric.train.exposed import centre_ms
from gpufabric.train.model_shape import step_bytes
from gpufabric.train.result import TrainResult
from gpufabric.train.verdict import agreement_verdict, overlap_rates_text
from gpufabric.units import human_size

if TYPE_CHECKING:
    from gpufabric.train.runner import PreparedTrainRun


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
        f"each rank sends {human_size(wire)} per step",
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
    if result.exposed_from == "split":
        head = f"split: step {result.step.mean_ms:.2f} ms"
        backward = (
            f"(twin {phases.compute_backward.mean_ms:.2f}, so {result.comm_ms:.2f} exposed communication)"
        )
    else:  # DDP: the twin runs the same optimizer, so the steps back to back differ by the communication
        samples = result.exposed_samples()
        synced, twin = centre_ms(samples.synced, "median"), centre_ms(samples.twin, "median")
        head = (
            f"split: step {result.step.mean_ms:.2f} ms (back to back the median {synced:.2f}, the twin's "
            f"{twin:.2f}, so {result.comm_ms:.2f} exposed communication)"
        )
        backward = f"(twin {phases.compute_backward.mean_ms:.2f})"
    return (
        f"{head} = forward+backward {phases.synced_backward.mean_ms:.2f} {backward} + "
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
    probe = result.comm.contention
    rates = overlap_rates_text(p, probe)
    contention = f", contention {p.contention_ms:.2f}: {rates}" if rates else ""
    host = result.comm.host_path
    bounds = (
        f"; the larger of communication {p.comm_exposed_ms:.2f} and host path {p.host_bound_ms:.2f} (the "
        f"synced step took {host.synced_host_ms:.2f} ms to issue to the end of backward, its twin "
        f"{host.twin_host_ms:.2f}; on the device {host.synced_device_ms:.2f} and {host.twin_device_ms:.2f})"
        if host is not None and p.host_bound_ms is not None and p.comm_exposed_ms is not None
        else ""
    )
    wait = (
        f"; plus {p.rank_wait_ms:.2f} waiting for every rank's step (each twin step's slowest rank against "
        "the slowest rank's own steps)"
        if p.rank_wait_ms is not None
        else ""
    )
    return (
        f"communication: {p.wire_ms:.2f} ms on the wire at busbw {p.effective_busbw_gbs:.2f} GB/s "
        f"({p.busbw_source}{latency}); predicted exposed {p.predicted_comm_ms:.2f} ms (forward stalls "
        f"{p.forward_stall_ms:.2f}{contention}{bounds}{wait}), measured {p.measured_comm_ms:.2f} ms = "
        f"{p.agreement_pct:.0f}% of predicted"
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
