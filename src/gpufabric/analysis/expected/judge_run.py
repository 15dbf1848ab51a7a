"""``judge_run``: every size of every collective of a run against what its hardware should reach
(``gpufabric.expect.expect`` and ``judge``), as a ``RunExpectation`` the renderers print.

The run's layout (``setting``) and evidence (``run_evidence``) come from its metadata and NCCL's log; its
hardware from ``shapes_of_run``. Hosts of different shapes: each collective is judged against the host
whose ceiling is lowest (the slowest node sets a collective's pace). Runs the model has no path for are
not judged, in one note that says why: CPU ranks (gloo), and virtual nodes whose NCCL network is a NIC's
own loopback (NET/IB or EFA on one host) rather than NCCL's sockets.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from gpufabric.analysis.expected.given import GivenShape
from gpufabric.analysis.expected.run_evidence import run_evidence, straggler_words
from gpufabric.analysis.expected.setting import RunSetting, run_setting
from gpufabric.analysis.expected.shapes import run_hosts, shapes_of_run
from gpufabric.collectives import ALL_COLLECTIVES, CollectiveName
from gpufabric.expect import Expectation, Judgement, expect, judge
from gpufabric.expect.regimes import Path as LinkPath
from gpufabric.hardware import NodeShape
from gpufabric.results.attestation import Attestation
from gpufabric.results.expected import RunExpectation, SeriesExpectation, SizeJudgement
from gpufabric.results.model import Row, RunResult, Series
from gpufabric.units import human_size

CPU_NOTE = (
    "not judged: no model for CPU ranks (gloo's TCP between processes; gpufabric.expect models NCCL's "
    "transports on GPUs)"
)


def _busbw(row: Row) -> float | None:
    placement = row.out_of_place or row.in_place
    return placement.busbw_gbs if placement is not None else None


def _expectation(
    shape: NodeShape, name: CollectiveName, setting: RunSetting, size: int | None
) -> Expectation:
    return expect(
        shape,
        name,
        setting.nodes,
        size,
        ranks_per_node=setting.ranks_per_node,
        hosts=setting.hosts,
        transport=setting.transport,
        regime=setting.all_reduce_regime if name == "all_reduce" else None,
        nvls=setting.nvls,
        socket_threads=setting.socket_threads,
        socks_per_thread=setting.socks_per_thread,
        ranks_per_process=setting.ranks_per_process,
    )


def _slowest(shapes: Mapping[str, NodeShape], name: CollectiveName, setting: RunSetting) -> NodeShape:
    known = [(e.ceiling_gbps, s) for s in shapes.values() if (e := _expectation(s, name, setting, None))]
    with_ceiling = [(c, s) for c, s in known if c is not None]
    return min(with_ceiling, key=lambda cs: cs[0])[1] if with_ceiling else known[0][1]


def route(expectation: Expectation) -> str:
    """The bounding path in a few words: ``NVLink 18 x 25 GB/s``, ``4 efa NICs, 50 GB/s per node``."""
    facts, path = expectation.facts, expectation.path
    if path is LinkPath.NVLINK and "NVLink links per GPU" in facts:
        rate = facts.get("NVLink GB/s per link per direction")
        return f"NVLink {facts['NVLink links per GPU']} x {rate:g} GB/s" if rate else "NVLink"
    if path is LinkPath.PCIE and "PCIe generation" in facts:
        return f"PCIe gen{facts['PCIe generation']} x{facts.get('PCIe width')}"
    if path is LinkPath.NET:
        nics, kind = facts.get("fabric NICs per node"), facts.get("NIC kind", "fabric")
        node = facts.get("node NIC GB/s")
        return f"{nics} {kind} NICs" + (f", {node:g} GB/s per node" if node else "")
    if path is LinkPath.SOCKET and facts.get("hosts") == 1:
        return f"sockets on one host over loopback ({facts.get('socket streams per connection')})"
    if path is LinkPath.SOCKET and "socket NIC" in facts:
        return f"sockets over {facts['socket NIC']} {facts.get('socket NIC Gbit/s')} Gbit/s"
    return path.value


def _size(row: Row, measured: float, verdict: Judgement) -> SizeJudgement:
    expectation = verdict.expectation
    below = verdict.verdict == "below"
    band = expectation.band
    return SizeJudgement(
        size_bytes=row.size_bytes,
        measured_gbps=measured,
        verdict=verdict.verdict,
        expected_gbps=band.centre_gbps if band else None,
        band_low_gbps=band.low_gbps if band else None,
        band_high_gbps=band.high_gbps if band else None,
        latency_regime=row.size_bytes < expectation.band_from_bytes,
        percent_of_expected=verdict.percent_of_expected,
        percent_of_ceiling=verdict.percent_of_ceiling,
        causes=list(verdict.reasons) if below else [],
        causes_guessed=verdict.guessed if below else False,
        message=verdict.message,
    )


def judge_series(
    series: Series,
    shapes: Mapping[str, NodeShape],
    setting: RunSetting,
    attestation: Attestation | None,
    place: Callable[[int], str | None] | None = None,
) -> SeriesExpectation | None:
    """One collective's expectation and each size judged (None for a collective the model lacks)."""
    name = series.collective.split("#")[0]  # a repeated collective is "name#2"
    collective = next((c for c in ALL_COLLECTIVES if c == name), None)
    if collective is None or not shapes:
        return None
    shape = _slowest(shapes, collective, setting)
    sizes: list[SizeJudgement] = []
    stragglers = set(series.stragglers())
    for row in series.rows:
        measured = _busbw(row)
        if measured is None:
            continue
        expectation = _expectation(shape, collective, setting, row.size_bytes)
        evidence = run_evidence(setting, attestation, shape, row, place, stragglers)
        sizes.append(_size(row, measured, judge(measured, expectation, evidence)))
    large = _expectation(shape, collective, setting, None)
    band = large.band
    return SeriesExpectation(
        collective=series.collective,
        nodes=large.nodes,
        ranks_per_node=large.ranks_per_node,
        hosts=setting.hosts,
        path=large.path.value,
        regime=large.regime.value,
        route=route(large),
        ceiling_gbps=large.ceiling_gbps,
        band_low_gbps=band.low_gbps if band else None,
        band_centre_gbps=band.centre_gbps if band else None,
        band_high_gbps=band.high_gbps if band else None,
        band_from_bytes=large.band_from_bytes,
        formula=large.formula,
        sources=list(large.sources),
        missing=list(large.missing),
        sizes=sizes,
    )


SLOW_RANK_NOTE = "a rank slower than its peers"
"""How a straggler note reads after the collective's name (doctor turns these into warnings)."""


def straggler_notes(result: RunResult) -> list[str]:
    """One note per collective whose sizes show a rank its peers waited for (``--per-iteration``): the
    judgement's "a rank slower than its peers" where there is no band to fall below."""
    notes = []
    for series in result.series:
        named = series.stragglers()
        hits = [
            (row, hit)
            for row in series.rows
            if (hit := straggler_words(row, result.metadata.rank_place)) and hit[0] in named
        ]
        if not hits:
            continue
        ranks = sorted({hit[0] for _, hit in hits})
        row, (rank, words) = hits[0]
        first = human_size(row.size_bytes)
        notes.append(
            f"{series.collective}: {SLOW_RANK_NOTE}: rank {', '.join(map(str, ranks))} at "
            f"{len(hits)} of {len(series.rows)} size(s); at {first} rank {rank} ({words})"
        )
    return notes


def _not_modelled(setting: RunSetting) -> str | None:
    if setting.cpu_ranks:
        return CPU_NOTE
    if setting.virtual and setting.network_kind not in (None, "socket"):
        return (
            f"not judged: virtual nodes on one host over NCCL's {setting.network_kind} network (a NIC's own "
            "loopback): gpufabric.expect has no ceiling for it, only for NCCL's sockets between them"
        )
    return None


def judge_run(
    result: RunResult,
    shapes: Mapping[str, NodeShape],
    *,
    shapes_from: str,
    attestation: Attestation | None = None,
) -> RunExpectation:
    """Every collective of ``result`` judged on ``shapes`` (host -> shape)."""
    attestation = attestation or result.attestation
    setting = run_setting(result, attestation)
    notes = list(setting.notes)
    skipped = _not_modelled(setting)
    series: list[SeriesExpectation] = []
    notes.extend(straggler_notes(result))  # with a model or without one, a rank the others waited for
    if skipped:
        notes.append(skipped)
    else:
        for one in result.series:
            judged = judge_series(one, shapes, setting, attestation, result.metadata.rank_place)
            if judged is None:
                notes.append(f"{one.collective}: not judged: gpufabric.expect has no model for it")
            else:
                series.append(judged)
    return RunExpectation(shapes_from=shapes_from, setting=setting.words(), series=series, notes=notes)


def shapes_words(shapes: Mapping[str, NodeShape]) -> str:
    """Where the shapes came from, in words (their ``source`` and first note)."""
    words = {
        "detected": "this node, read now",
        "snapshot": "the node snapshots the run recorded",
        "catalog": "the catalog's instance type",
        "given": "the result's devices and topology (partial)",
        "nccl-log": "NCCL's log",
    }
    parts = [f"{host}: {words.get(s.source, s.source)}" for host, s in shapes.items()]
    return "; ".join(parts) or "no shape"


def expect_run(
    result: RunResult,
    run_dir: Path | None = None,
    *,
    environ: Mapping[str, str],
    given: GivenShape | None = None,
    attestation: Attestation | None = None,
) -> RunExpectation:
    """``judge_run`` on the run's own shapes (``shapes_of_run``), or on the ``given`` shape for every host
    (``--instance-type``, ``--snapshot``)."""
    attestation = attestation or result.attestation
    if given is not None:
        names = run_hosts(result, attestation) or [given.shape.hostname or "node"]
        shapes = dict.fromkeys(names, given.shape)
        return judge_run(result, shapes, shapes_from=given.source, attestation=attestation)
    shapes = shapes_of_run(result, run_dir, environ=environ, attestation=attestation)
    return judge_run(result, shapes, shapes_from=shapes_words(shapes), attestation=attestation)


def with_expected(
    result: RunResult,
    run_dir: Path | None = None,
    *,
    environ: Mapping[str, str],
    given: GivenShape | None = None,
) -> RunResult:
    """``result`` with its judgement (``RunResult.expected``) filled in."""
    expected = expect_run(result, run_dir, environ=environ, given=given)
    return result.model_copy(update={"expected": expected})
