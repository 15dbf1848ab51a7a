"""``gpufabric isolate``'s answer as text: a search's ``IsolationReport`` (``--simulate``) or a real run's
``MeasuredIsolation`` (the report and how every group test was measured), as a table or JSON
(``ISOLATE_FORMATS``; ``render_isolate``). Pure: document in, text out; the CLI prints it.

The table shows the verdict line ("found in N rounds"), the reference the groups were judged against, a
warning per suspect not proven (its retests against the healthy spread), each suspect with its evidence
rows, and a count of nodes per verdict (listing every healthy node of 4096 would drown the answer;
``--format json`` has the full per-node map). A real run's table adds what was measured above it, and
below it the ranks and hosts of every suspect: what an operator drains.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from gpufabric.analysis.isolate import IsolationReport, MeasuredIsolation, NodeVerdict
from gpufabric.boundary_names import FAULT_ENV
from gpufabric.report.formats import ISOLATE_FORMATS, Format
from gpufabric.units import human_size

MAX_EVIDENCE_ROWS = 8


def headline(report: IsolationReport) -> str:
    convicted = report.convicted
    counts = f"{report.rounds} rounds, {report.groups_measured} group tests"
    # "no slow node found" must never stand over groups that fell short and stayed unexplained.
    if not convicted and report.unresolved:
        unexplained = f"{len(report.unresolved)} short group(s) unexplained"
        return f"unresolved: nothing convicted, but {unexplained} ({counts})"
    if not convicted and report.cluster_shortfall:
        return f"no single slow node or link found, but the whole cluster is short (see warning) ({counts})"
    if not convicted and report.not_proven:
        return f"nothing proven: {len(report.not_proven)} suspect(s) not proven, see warning ({counts})"
    if not convicted:
        return f"no slow node or link found ({counts})"
    named = ", ".join(f"{'node' if s.kind == 'node' else 'link'} {'-'.join(s.nodes)}" for s in convicted)
    still_open = f"; {len(report.unresolved)} unresolved" if report.unresolved else ""
    return (
        f"found {named} in {report.found_in_rounds} rounds "
        f"({report.rounds} rounds in all, {report.groups_measured} group tests, {report.node_count} nodes)"
        f"{still_open}"
    )


def render_table(report: IsolationReport) -> str:
    ref = report.reference
    # With few peers the judging level is the expected value; the groups' own median is shown beside it.
    level = (
        f" (judged against {ref.median_ratio:.3f}: too few groups to trust their median)"
        if ref.median_ratio != ref.peer_median_ratio
        else ""
    )
    lines = [
        headline(report),
        f"reference: median busbw/expected {ref.peer_median_ratio:.3f} over {ref.peers} groups of "
        f"{report.group_size}{level}, robust noise {ref.robust_cv:.1%}, short below "
        f"{ref.threshold_ratio:.3f} (tolerance {ref.tolerance:.0%})",
    ]
    if report.cluster_shortfall:
        lines.append(f"warning: {report.cluster_shortfall}")
    for suspect in report.not_proven:
        # Exit 0 stands, but a user must see what was suspected and why it was let go: the spread.
        why = suspect.proof.summary() if suspect.proof else suspect.reason
        lines.append(f"warning: not proven: {suspect.kind} {'-'.join(suspect.nodes)}: {why}")
    for suspect in report.suspects:
        lines += ["", f"{suspect.verdict} {suspect.kind} {'-'.join(suspect.nodes)}: {suspect.reason}"]
        lines.append(
            f"  {'round':>5}  {'purpose':<12} {'busbw':>9} {'expected':>9} {'ratio':>6}  result  group"
        )
        rows = suspect.evidence
        for ev in rows[-MAX_EVIDENCE_ROWS:]:
            expected = f"{ev.expected_gbps:9.2f}" if ev.expected_gbps is not None else f"{'-':>9}"
            group = ",".join(ev.group[:4]) + (f",+{len(ev.group) - 4}" if len(ev.group) > 4 else "")
            lines.append(
                f"  {ev.round:>5}  {ev.purpose:<12} {ev.busbw_gbps:9.2f} {expected} {ev.ratio:6.3f}  "
                f"{'SHORT' if ev.short else 'pass':<6}  {group}"
            )
        if len(rows) > MAX_EVIDENCE_ROWS:
            lines.append(f"  ... {len(rows) - MAX_EVIDENCE_ROWS} earlier row(s) in --format json")
    for item in report.unresolved:
        lines.append(f"unresolved: {item}")
    counts = Counter(report.verdicts.values())
    lines += ["", "verdicts: " + ", ".join(f"{v.value} {counts[v]}" for v in NodeVerdict if counts[v])]
    rounds = " ".join(f"{r.round}:{'+'.join(r.purposes)}({r.groups}/{r.short})" for r in report.round_log)
    lines.append(f"rounds (purpose(groups/short)): {rounds}")
    return "\n".join(lines)


def _where(node: str, node_ranks: Mapping[str, list[int]], rank_hosts: Mapping[int, str]) -> str:
    ranks = node_ranks.get(node, [])
    hosts = sorted({rank_hosts[r] for r in ranks if r in rank_hosts})
    label = "rank" if len(ranks) == 1 else "ranks"
    numbers = ",".join(str(r) for r in ranks) or "?"
    return f"{label} {numbers} on {', '.join(hosts) or 'an unreported host'}"


def host_verdicts(
    report: IsolationReport, node_ranks: Mapping[str, list[int]], rank_hosts: Mapping[int, str]
) -> list[str]:
    """One line per suspect naming the ranks and the hosts they ran on: what an operator drains."""
    lines = []
    for suspect in report.suspects:
        places = [f"{node} ({_where(node, node_ranks, rank_hosts)})" for node in suspect.nodes]
        what = "slow" if suspect.kind == "node" else "slow link"
        prefix = "" if suspect.verdict == "convicted" else f"{suspect.verdict}, "
        lines.append(f"{prefix}{what}: {' - '.join(places)}")
    return lines


def measured_table(answer: MeasuredIsolation) -> str:
    """The search's table under two lines saying what was measured, and a fault warning when one was set."""
    expected = (
        f"{answer.expected_gbps:.3f} GB/s ({answer.expected_source})"
        if answer.expected_gbps
        else (answer.expected_source)
    )
    lines = [
        f"measured: {answer.collective} {human_size(answer.size_bytes)} per group "
        f"({answer.statistic} of {answer.batches or 'its'} batches), {answer.backend} on "
        f"{answer.world_size} rank(s) via {answer.launcher}, one rank per node; expected busbw {expected}",
    ]
    if answer.fault:
        lines.append(
            f"fault injected: {FAULT_ENV}={answer.fault} (a test run: this slowness was made on purpose)"
        )
    lines += [f"note: {note}" for note in answer.notes]
    lines.append(render_table(answer.report))
    lines += host_verdicts(answer.report, answer.node_ranks, answer.rank_hosts)
    lines.append(f"rounds and per-group results: {answer.run_dir}")
    return "\n".join(lines)


def render_isolate(document: IsolationReport | MeasuredIsolation, fmt: Format) -> str:
    """``document`` in ``fmt`` (one of ``ISOLATE_FORMATS``), ending in a newline."""
    if fmt not in ISOLATE_FORMATS:
        raise ValueError(f"isolate renders {', '.join(f.value for f in ISOLATE_FORMATS)}, not {fmt.value}")
    if fmt is Format.JSON:
        return document.model_dump_json(indent=2) + "\n"
    if isinstance(document, MeasuredIsolation):
        return measured_table(document) + "\n"
    return render_table(document) + "\n"
