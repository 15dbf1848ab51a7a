"""What the probes give the prediction: the overlap model's rates and the host path's bound.

Rates. DDP's compute never waits for a collective before the optimizer: each bucket's all-reduce runs once
every rank has reached it, so the step ends when the rank the others wait for does, and that rank meets
calls its peers already run (kernels traced per rank on 4x H200, docs/train-bench.md finding 27). Its rates
are the waited-for probe's (``Contention.seen_by_waited_for``), where recorded. FSDP's ranks meet at every
gather, each computing beside the same calls: the contention probe's rates, every rank computing.

No host slack. A first model divided the waited-for compute rate by the twin's busy share (the contention
probe's backward alone over the waited-for probe's, 1.01-2.03 on 4x H200): that explained the split's low
readings, whose steps each start settled, with the device idle while the host issues. Judged against the
steps back to back, as training runs them, the measured rates alone predict the step (docs/train-bench.md
finding 36: six 4x H200 runs of 2026-11-28 05:31-05:35, median exposed 3.92-4.18 ms in five of them, the
rates alone predicting 4.11-4.37, with the slack 3.15-4.20); the slack's ratio read 2.03 in one of them.

Host bound. The synced step's backward cannot end on the device before its host has issued it, and its
last call runs after that: exposed communication is at least the synced host's issue time minus the twin's
device time (each from its own step's start after a synchronisation; medians of the slowest rank), plus
the last call alone on the wire.
No torch here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gpufabric.train.measures import RatesSource
from gpufabric.train.result import TrainResult
from gpufabric.train.schedule import Rates


@dataclass(frozen=True)
class ProbeRates:
    """The overlap model's rates and which probe read them."""

    rates: Rates
    source: RatesSource


def probe_rates(result: TrainResult) -> ProbeRates:
    """The rates the overlap model takes for ``result`` (module docstring)."""
    probe = result.comm.contention
    if probe is None:
        return ProbeRates(Rates(), "none")
    host = result.comm.host_path
    on_device = host is not None and host.on_device
    # The waited-for rank's rates where its calls did not cost its host (gated, or CPU ranks where issuing
    # is running); a Python-issued probe on a device falls to the contention probe's rule below.
    seen = probe.seen_by_waited_for() if result.strategy == "ddp" else None
    if seen is not None and (probe.gated or not on_device):
        return ProbeRates(Rates(compute=seen.compute_rate, comm=seen.comm_rate), "waited-for")
    if host is not None and on_device and host.host_paced >= HOST_PACED_AT and not probe.gated:
        # A probe whose calls the host issued from Python beside the compute added host gaps the step does
        # not have: on a host-paced step its compute rate is no measure (4x H200, 2026-11-27 14:33 UTC,
        # gpt-350m DDP: the rate of 83% added 1.01 ms of the 1.67 predicted where the step showed -0.45 +-
        # 2.92). A gated probe costs the host nothing, so its rate is kept (finding 26).
        return ProbeRates(Rates(compute=1.0, comm=probe.comm_rate), "contention")
    return ProbeRates(Rates(compute=probe.compute_rate, comm=probe.comm_rate), "contention")


HOST_PACED_AT = 0.9
"""The twin's host time over its device time from which an ungated probe's compute rate is not used: below
it the device is the bottleneck and the probe's issue gaps hide behind kernels still running. DDP's twin
read 0.70-0.74 on the first 2x H200 machine of docs/benchmarks.md §19, 0.99 on the second, 0.90-1.00 on
4x H200."""


def host_bound_ms(result: TrainResult, durations: Sequence[float]) -> float | None:
    """The host path's bound on exposed communication (module docstring): the synced host's issue time
    past the twin's device end, then the last call. None without the probe (older documents, one rank) and
    on CPU ranks (issuing a step is running it). Where the twin's device ran behind its host, that lag
    absorbs as much of the synced host's extra issue time; where it absorbs all of it (a device-paced
    step), the bound is the last call alone."""
    probe = result.comm.host_path
    if probe is None or not probe.on_device or not durations:
        return None
    return max(0.0, probe.synced_host_ms - probe.twin_device_ms) + durations[-1]
