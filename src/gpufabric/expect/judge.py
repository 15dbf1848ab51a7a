"""``judge``: a measured busbw against its ``Expectation``: how far from the band and the ceiling, a verdict,
and the likely cause of a shortfall, in one line.

Causes come from the ``Evidence`` a caller has (transports NCCL's log shows, NICs used and available,
GPUDirect RDMA on or off, ranks per node, a slow rank) and, without it, from the shape alone: busbw near
1/K of the expected on a node with K NICs reads as traffic on one NIC; far below the NET ceiling
(under ``SOCKET_LIKE`` of it) reads as TCP sockets instead of RDMA. A guess from the shape alone says
"likely" and names the log line that would tell.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from gpufabric.expect.model import Expectation
from gpufabric.expect.published import Cause
from gpufabric.expect.regimes import Path
from gpufabric.units import human_size

TransportSeen = Literal["nvlink", "pcie", "shm", "net", "socket", "collnet", "nvls"]
Verdict = Literal["within", "below", "above-band", "above-ceiling", "not-judged"]
ONE_OF_K_TOLERANCE = 0.25
"""busbw / expected centre within 1/K x (1 +/- this) reads as traffic on 1 of K NICs."""
SOCKET_LIKE = 0.25
"""busbw under this fraction of the NET ceiling reads as TCP sockets rather than the fabric."""


class Evidence(BaseModel):
    """What a run showed beyond its busbw (all optional: give what the log or counters told)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    transports: frozenset[TransportSeen] = frozenset()
    nics_used: int | None = Field(default=None, ge=0)
    nics_available: int | None = Field(default=None, ge=0)
    gdr: bool | None = Field(default=None, description="GPUDirect RDMA on (True) or off (False)")
    ranks_per_node: int | None = Field(default=None, ge=1)
    gpus_per_node: int | None = Field(default=None, ge=1)
    slow_rank: int | None = Field(default=None, ge=0, description="a rank slower than its peers")
    slow_rank_words: str | None = Field(
        default=None,
        description="where that rank ran and what it cost, in words (``host h, GPU 2 ...; 77 us of 100``)",
    )
    launch_issue_us: float | None = Field(
        default=None,
        ge=0,
        description="the size was launch-bound: the slowest host's time to issue each call (us), which the "
        "GPUs waited for (``Measurement.launch_bound``)",
    )


class Judgement(BaseModel):
    """One measured busbw, judged."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    measured_gbps: float
    verdict: Verdict
    percent_of_expected: float | None
    percent_of_ceiling: float | None
    causes: tuple[Cause, ...] = Field(default=(), description="likely causes of a shortfall, likeliest first")
    reasons: tuple[str, ...] = Field(default=(), description="each cause in words, in the order of causes")
    guessed: bool = Field(default=False, description="the causes come from the shape alone, not evidence")
    message: str
    expectation: Expectation


LAUNCH_BOUND_WORDS = "the GPUs waited for the hosts' calls, or nearly"
"""How the launch-bound cause begins in words (``doctor`` gives such a shortfall its own fix)."""


def _evidence_causes(expectation: Expectation, evidence: Evidence) -> list[tuple[Cause, str]]:
    causes: list[tuple[Cause, str]] = []
    if "socket" in evidence.transports and expectation.path is Path.NET:
        causes.append(("socket-fallback", "NCCL used TCP sockets (NET/Socket), not the fabric"))
    used, available = evidence.nics_used, evidence.nics_available
    if used is not None and available and used < available:
        causes.append(("one-nic", f"traffic on {used} of {available} NICs"))
    if evidence.gdr is False and expectation.path is Path.NET:
        causes.append(("no-gdr", "no GPUDirect RDMA: every byte is staged through host memory"))
    ranks, gpus = evidence.ranks_per_node, evidence.gpus_per_node
    if ranks is not None and gpus is not None and ranks < gpus:
        causes.append(("missing-gpu", f"{ranks} of {gpus} GPUs per node took part"))
    if evidence.slow_rank is not None:
        words = f" ({evidence.slow_rank_words})" if evidence.slow_rank_words else ""
        causes.append(
            ("slow-rank", f"rank {evidence.slow_rank} is slower than its peers and sets the pace{words}")
        )
    if evidence.launch_issue_us is not None:
        causes.append(
            (
                "launch-bound",
                f"{LAUNCH_BOUND_WORDS} ({evidence.launch_issue_us:.1f} us to issue each): "
                "the time is the host's, or the host's and the GPUs' alike, not the fabric's bandwidth "
                "(--graph times the GPUs alone)",
            )
        )
    if (
        expectation.path is Path.NVLINK
        and {"pcie", "shm"} & evidence.transports
        and "nvlink" not in evidence.transports
    ):
        causes.append(("pcie-bound", "the GPUs exchanged data over PCIe or shared memory, not NVLink"))
    if (
        expectation.path is Path.NVLINK
        and {"net", "socket"} & evidence.transports
        and not {"nvlink", "pcie", "shm", "nvls"} & evidence.transports
    ):
        name = "sockets (NET/Socket)" if "socket" in evidence.transports else "the network transport (NET)"
        causes.append(("socket-fallback", f"NCCL's log shows the GPUs of one node talking through {name}"))
    return causes


def _shape_causes(measured: float, expectation: Expectation) -> list[tuple[Cause, str]]:
    causes: list[tuple[Cause, str]] = []
    band, ceiling = expectation.band, expectation.ceiling_gbps
    nics = expectation.facts.get("fabric NICs per node")
    if expectation.path is Path.NET and isinstance(nics, int) and nics > 1 and band is not None:
        share = measured / band.centre_gbps * nics
        if abs(share - 1) <= ONE_OF_K_TOLERANCE:
            causes.append(("one-nic", f"busbw near 1/{nics} of expected: traffic on 1 of {nics} NICs"))
    if expectation.path in (Path.NET, Path.NVLINK) and ceiling and measured < SOCKET_LIKE * ceiling:
        instead = "RDMA" if expectation.path is Path.NET else "NVLink"
        where = "fabric" if expectation.path is Path.NET else "NVLink"
        clause = f"under {SOCKET_LIKE:.0%} of the {where} ceiling: TCP sockets instead of {instead}"
        causes.append(("socket-fallback", clause))
    return causes


def _percent(value: float, of: float | None) -> float | None:
    return round(100 * value / of, 1) if of else None


def _where(expectation: Expectation) -> str:
    ceiling = expectation.ceiling_gbps
    where = f"{expectation.path.value}/{expectation.regime.value}"
    return f"{where} ceiling {ceiling:.1f} GB/s" if ceiling is not None else f"{where}, no ceiling"


def judge(measured_busbw: float, expectation: Expectation, evidence: Evidence | None = None) -> Judgement:
    """``measured_busbw`` (GB/s) against ``expectation``: verdict, percentages, likely causes, one line."""
    band, ceiling = expectation.band, expectation.ceiling_gbps
    of_expected = _percent(measured_busbw, band.centre_gbps if band else None)
    of_ceiling = _percent(measured_busbw, ceiling)
    head = f"{expectation.collective} {measured_busbw:.1f} GB/s"
    found = _evidence_causes(expectation, evidence) if evidence else []
    verdict: Verdict
    guessed = False
    above = (band is not None and measured_busbw > band.high_gbps) or (
        ceiling is not None and measured_busbw > ceiling
    )
    explained = [
        a
        for a in expectation.alternatives
        if a.band and a.band.low_gbps <= measured_busbw <= a.band.high_gbps
    ]
    if above and explained and expectation.judged_by_bandwidth:
        alt = explained[0]
        assert alt.band is not None
        name = alt.regime.value.upper()
        verdict = "within"
        text = (
            f"within {name}'s expected {alt.band.low_gbps:.1f}-{alt.band.high_gbps:.1f} GB/s ({name} ceiling "
            f"{alt.ceiling_gbps:.1f}; above the {_where(expectation)}: NCCL likely used {name})"
        )
    elif ceiling is not None and measured_busbw > ceiling:
        faster = [a for a in expectation.alternatives if a.ceiling_gbps >= measured_busbw]
        if faster:
            verdict = "above-band"
            text = (
                f"above the {_where(expectation)}, below {faster[0].regime.value.upper()}'s "
                f"{faster[0].ceiling_gbps:.1f}: NCCL likely used {faster[0].regime.value.upper()}"
            )
        else:
            verdict = "above-ceiling"
            text = (
                f"above the {_where(expectation)}: suspicious; check the rank count, the size and the "
                "shape's link facts"
            )
    elif not expectation.judged_by_bandwidth or band is None:
        verdict = "not-judged"
        if band is None:
            text = "not judged: no band (" + "; ".join(expectation.missing or ["no calibration"]) + ")"
        else:
            size = human_size(expectation.size_bytes or 0)
            text = (
                f"not judged at {size}: latency, not bandwidth, sets sizes below "
                f"{human_size(expectation.band_from_bytes)} on {expectation.path.value}"
            )
    elif measured_busbw > band.high_gbps:
        verdict = "above-band"
        text = f"above the expected {band.low_gbps:.1f}-{band.high_gbps:.1f} GB/s ({_where(expectation)})"
    elif measured_busbw >= band.low_gbps:
        verdict = "within"
        text = f"within the expected {band.low_gbps:.1f}-{band.high_gbps:.1f} GB/s ({_where(expectation)})"
    else:
        verdict = "below"
        guessed = not found
        found = found or _shape_causes(measured_busbw, expectation)
        text = f"below the expected {band.low_gbps:.1f}-{band.high_gbps:.1f} GB/s ({_where(expectation)})"
    percents = ", ".join(
        p
        for p in (
            f"{of_expected:.0f}% of expected" if of_expected is not None else "",
            f"{of_ceiling:.0f}% of ceiling" if of_ceiling is not None else "",
        )
        if p
    )
    message = f"{head}: {text}" + (f" [{percents}]" if percents else "")
    if found:
        label = ("likely cause: " if guessed else "cause: ") if verdict == "below" else "seen: "
        message += "; " + label + "; ".join(c for _, c in found)
    elif verdict == "below":
        message += "; no cause stands out: NCCL's log (NCCL_DEBUG=INFO) shows the transport, NICs, slow ranks"
    return Judgement(
        measured_gbps=measured_busbw,
        verdict=verdict,
        percent_of_expected=of_expected,
        percent_of_ceiling=of_ceiling,
        causes=tuple(dict.fromkeys(cause for cause, _ in found)),
        reasons=tuple(dict.fromkeys(text for _, text in found)),
        guessed=guessed and bool(found),
        message=message,
        expectation=expectation,
    )
