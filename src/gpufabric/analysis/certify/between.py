"""Between nodes: isolate's answer (``MeasuredIsolation``) as findings per certified node.

A node isolate convicts fails with reason ``slow`` and carries the proof: the retests beside healthy
controls in the same rounds, the rank test's p against alpha, and every group measurement behind it
(measured vs the reference the groups were judged against). A convicted link cannot say which end is at
fault: both ends are degraded. A suspect the retests did not separate from the healthy spread is noise,
said and not held against the node; a node no group test reached is degraded (untested).
``names`` maps isolate's node names (its ranks, in order) back to the certified nodes.
"""

from __future__ import annotations

from collections.abc import Mapping

from gpufabric.analysis.certify.model import Figure, Finding, NodeStatus
from gpufabric.analysis.isolate import Evidence, MeasuredIsolation, NodeVerdict, Suspect


def _evidence_lines(evidence: list[Evidence], names: Mapping[str, str]) -> list[str]:
    lines = []
    for item in evidence:
        group = "+".join(names.get(node, node) for node in item.group)
        expected = f" vs {item.expected_gbps:.3f} expected" if item.expected_gbps else ""
        lines.append(
            f"round {item.round} ({item.purpose}): {group} {item.busbw_gbps:.3f} GB/s{expected}, "
            f"ratio {item.ratio:.2f} (short below {item.threshold_ratio:.2f}){' SHORT' if item.short else ''}"
        )
    return lines


def _figure(suspect: Suspect, answer: MeasuredIsolation) -> list[Figure]:
    short = [e for e in suspect.evidence if e.short]
    if not short:
        return []
    worst = min(short, key=lambda e: e.ratio)
    source = (
        f"the reference the group tests were judged against ({answer.expected_source})"
        if worst.expected_gbps
        else "no expected figure: the groups' own reference was not recorded"
    )
    return [
        Figure(
            what=f"{answer.collective} busbw of its group, round {worst.round}",
            measured=worst.busbw_gbps,
            expected=worst.expected_gbps,
            source=source,
        )
    ]


def _suspect_finding(suspect: Suspect, answer: MeasuredIsolation, names: Mapping[str, str]) -> Finding:
    evidence = _evidence_lines(suspect.evidence, names)
    proof = suspect.proof.summary() if suspect.proof is not None else None
    if proof:
        evidence.insert(0, f"proof: {proof}")
    ends = [names.get(node, node) for node in suspect.nodes]
    if suspect.verdict == "not-proven":
        return Finding(
            stage="between",
            code="between:not-proven",
            status=NodeStatus.PASS,
            text=f"flagged once, not proven by its retests beside healthy groups: {suspect.reason}",
            evidence=evidence,
        )
    if suspect.kind == "node":
        return Finding(
            stage="between",
            code="slow",
            status=NodeStatus.FAIL,
            text=f"slow: convicted by group tests beside healthy controls ({suspect.reason})",
            evidence=evidence,
            figures=_figure(suspect, answer),
        )
    return Finding(
        stage="between",
        code="slow-link",
        status=NodeStatus.DEGRADED,
        text=f"slow link {'-'.join(ends)}: which end is at fault is not proven ({suspect.reason})",
        evidence=evidence,
        figures=_figure(suspect, answer),
    )


def between_findings(answer: MeasuredIsolation, names: Mapping[str, str]) -> dict[str, list[Finding]]:
    """certified node -> its findings from one isolate search; ``names``: isolate's name -> ours."""
    report = answer.report
    out: dict[str, list[Finding]] = {node: [] for node in names.values()}
    for suspect in report.suspects:
        finding = _suspect_finding(suspect, answer, names)
        for node in suspect.nodes:
            out[names.get(node, node)].append(finding)
    for node, verdict in report.verdicts.items():
        mine = out[names.get(node, node)]
        if verdict is NodeVerdict.UNTESTED:
            mine.append(
                Finding(
                    stage="between",
                    code="between:untested",
                    status=NodeStatus.DEGRADED,
                    text="no group test reached this node (too few healthy partners)",
                )
            )
        elif not mine:
            mine.append(
                Finding(
                    stage="between",
                    code="between",
                    status=NodeStatus.PASS,
                    text=f"passed group tests ({answer.collective}, {report.rounds} round(s), "
                    f"{report.groups_measured} group test(s)) beside healthy controls",
                )
            )
    shortfalls = [*([report.cluster_shortfall] if report.cluster_shortfall else []), *report.unresolved]
    for text in shortfalls:
        for mine in out.values():
            mine.append(
                Finding(
                    stage="between",
                    code="between:unresolved",
                    status=NodeStatus.DEGRADED,
                    text=f"the group tests left a shortfall unresolved: {text}",
                )
            )
    return out
