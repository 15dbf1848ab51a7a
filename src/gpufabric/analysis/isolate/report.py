"""Turn a ``SearchOutcome`` (node ids, internal records) into the named ``IsolationReport``.

The verdict per node follows from the findings: convicted node -> slow-node; an end of a convicted link ->
bad-link; a suspect not proven -> not-proven; otherwise ok when it passed some group, else untested.
Link convictions also carry each end's latest passing group: the proof that the node alone is fine.
"""

from __future__ import annotations

from collections.abc import Sequence

from gpufabric.analysis.isolate.model import (
    Evidence,
    IsolationReport,
    NodeVerdict,
    RoundRecord,
    Suspect,
)
from gpufabric.analysis.isolate.search import SearchOutcome
from gpufabric.analysis.isolate.stats import MIN_PEERS_FOR_MAD
from gpufabric.analysis.isolate.tasks import Finding, Record


def build_report(outcome: SearchOutcome, names: Sequence[str], group_size: int) -> IsolationReport:
    ref = outcome.reference

    def evidence(record: Record) -> Evidence:
        return Evidence(
            round=record.round,
            purpose=record.purpose,
            group=[names[n] for n in record.group],
            busbw_gbps=round(record.measurement.busbw_gbps, 3),
            expected_gbps=record.measurement.expected_gbps,
            ratio=round(record.ratio, 4),
            threshold_ratio=round(ref.threshold_ratio, 4),
            short=record.short,
        )

    def suspect(finding: Finding) -> Suspect:
        records = list(finding.evidence)
        if finding.kind == "link":
            passes = [outcome.last_pass[n] for n in finding.nodes]
            records += [r for r in passes if r is not None and r not in records]
        records.sort(key=lambda r: r.round)
        shorts = [r.ratio for r in records if r.short]
        return Suspect(
            kind=finding.kind,
            nodes=[names[n] for n in finding.nodes],
            verdict=finding.verdict,
            found_in_round=finding.round,
            worst_ratio=round(min(shorts, default=1.0), 4),
            reason=finding.reason,
            evidence=[evidence(r) for r in records],
            proof=finding.proof,
        )

    verdicts = {name: NodeVerdict.UNTESTED for name in names}
    for node, record in enumerate(outcome.last_pass):
        if record is not None:
            verdicts[names[node]] = NodeVerdict.OK
    ordered = sorted(outcome.findings, key=lambda f: f.verdict == "convicted")  # convictions win
    for finding in ordered:
        if finding.verdict == "not-proven":
            for node in finding.nodes:
                verdicts[names[node]] = NodeVerdict.NOT_PROVEN
        elif finding.kind == "link":
            for node in finding.nodes:
                if verdicts[names[node]] is not NodeVerdict.SLOW_NODE:
                    verdicts[names[node]] = NodeVerdict.BAD_LINK
        else:
            verdicts[names[finding.nodes[0]]] = NodeVerdict.SLOW_NODE
    shortfall = None
    # The peers' own median, not the judging level: with few groups that is held at the expected value.
    if ref.expected_known and ref.peer_median_ratio < 1 - ref.tolerance:
        _, _, screen_groups, screen_short, _ = outcome.round_log[0]
        if screen_groups == 1:
            shortfall = (
                f"the only group reached {ref.peer_median_ratio:.0%} of the expected busbw: with one group "
                "a slow node cannot be told from a slow cluster (4 nodes or more make 2 groups)"
            )
        elif screen_groups == screen_short:
            shortfall = (
                f"every group at {ref.peer_median_ratio:.0%} of expected (median): the whole cluster (or the "
                "expectation) is off - configuration, fabric off, wrong baseline - rather than one node"
            )
        elif screen_groups >= MIN_PEERS_FOR_MAD or 2 * screen_short > screen_groups:
            # Few groups: the median of 2 is their mean, so one slow pair "made the cluster slow" (seen
            # with 4 nodes and one slowed rank). Only a majority of short groups says the cluster is.
            shortfall = (
                f"the median group reached {ref.peer_median_ratio:.0%} of the expected busbw: the whole "
                "cluster is slow (configuration, fabric off, wrong baseline) rather than one node"
            )
    unresolved = [f"{_listed(names, d.nodes)}: {d.reason}" for d in outcome.dead_ends] + [
        f"{_listed(names, t.nodes)}: still open after the round limit" for t in outcome.stalled
    ]
    unresolved = list(dict.fromkeys(unresolved))  # a localize and a link search can end on the same nodes
    return IsolationReport(
        node_count=outcome.node_count,
        group_size=group_size,
        rounds=outcome.rounds,
        groups_measured=outcome.groups_measured,
        reference=ref,
        cluster_shortfall=shortfall,
        suspects=[suspect(f) for f in sorted(outcome.findings, key=lambda f: (f.round, f.nodes))],
        verdicts=verdicts,
        round_log=[
            RoundRecord(round=r, purposes=p, groups=g, short=s, nodes_busy=b)
            for r, p, g, s, b in outcome.round_log
        ],
        unresolved=unresolved,
    )


MAX_LISTED = 4


def _listed(names: Sequence[str], nodes: Sequence[int]) -> str:
    """The nodes by name, the first few of a large set and a count of the rest."""
    shown = ", ".join(names[n] for n in sorted(nodes)[:MAX_LISTED])
    rest = len(nodes) - MAX_LISTED
    return f"{shown} and {rest} more" if rest > 0 else shown
