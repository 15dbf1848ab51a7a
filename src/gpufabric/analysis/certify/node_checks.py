"""The preflight and parity stages' findings, from every node's ``NodeFacts``.

Preflight: each of the node's checks (``analysis.preflight``) that did not pass is a finding: FAIL fails
the node, WARN degrades it; SKIPs are evidence only. Parity: every version and every fabric variable
(``node_env.fabric_env``) is compared across the nodes; a value a strict majority shares is the
reference and each node that differs fails, naming its value, the majority's and who holds it. Without
a majority nobody can say which side is wrong: every node that differs is degraded, none failed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from gpufabric.analysis.certify.model import Finding, NodeFacts, NodeStatus
from gpufabric.analysis.doctor.model import Verdict
from gpufabric.boundary_names import NODE_OVERRIDE_ENV

VERSION_KEYS = ("nccl", "net_plugin", "driver", "cuda", "gpufabric")
SHOWN_NODES = 6
UNSET = "(unset)"


def preflight_findings(facts: NodeFacts) -> list[Finding]:
    """One finding per check of the node's preflight, plus one summary when every check passed."""
    findings = []
    for check in facts.preflight.checks:
        status = {Verdict.FAIL: NodeStatus.FAIL, Verdict.WARN: NodeStatus.DEGRADED}.get(check.verdict)
        if status is None:
            continue
        text = f"{check.title}: {check.cause}" + (f"; fix: {check.fix}" if check.fix else "")
        findings.append(
            Finding(
                stage="preflight",
                code=f"preflight:{check.id}",
                status=status,
                text=text,
                evidence=list(check.evidence),
            )
        )
    if not findings:
        passed = [c.id for c in facts.preflight.checks if c.verdict is Verdict.PASS]
        skipped = [f"{c.id} ({c.cause})" for c in facts.preflight.checks if c.verdict is Verdict.SKIP]
        findings.append(
            Finding(
                stage="preflight",
                code="preflight",
                status=NodeStatus.PASS,
                text=f"preflight on {facts.host}: passed {', '.join(passed) or 'nothing'}",
                evidence=[f"skipped: {s}" for s in skipped],
            )
        )
    if facts.node_env_override:
        findings.append(
            Finding(
                stage="preflight",
                code="preflight:test-override",
                status=NodeStatus.DEGRADED,
                text=f"test override applied on this node: {NODE_OVERRIDE_ENV}={facts.node_env_override}",
            )
        )
    return findings


def _values(facts: Mapping[str, NodeFacts]) -> dict[str, dict[str, str]]:
    """key -> node -> value, for every version and every fabric variable any node has."""
    table: dict[str, dict[str, str]] = {}
    for key in VERSION_KEYS:
        table[f"version:{key}"] = {node: getattr(f.versions, key) or UNSET for node, f in facts.items()}
    names = sorted({name for f in facts.values() for name in f.fabric_env})
    for name in names:
        table[name] = {node: f.fabric_env.get(name, UNSET) for node, f in facts.items()}
    return table


def _named(nodes: list[str]) -> str:
    more = len(nodes) - SHOWN_NODES
    return ", ".join(nodes[:SHOWN_NODES]) + (f" and {more} more" if more > 0 else "")


def parity_findings(facts: Mapping[str, NodeFacts]) -> dict[str, list[Finding]]:
    """node -> its parity findings (a pass finding when it agrees with the others on everything)."""
    out: dict[str, list[Finding]] = {node: [] for node in facts}
    if len(facts) < 2:
        for node in facts:
            out[node].append(
                Finding(
                    stage="parity",
                    code="parity",
                    status=NodeStatus.PASS,
                    text="one node: nothing to compare it with",
                )
            )
        return out
    for key, by_node in _values(facts).items():
        counts = Counter(by_node.values())
        if len(counts) == 1:
            continue
        (common, held), *_ = counts.most_common()
        majority = held * 2 > len(by_node)
        holders = sorted(n for n, v in by_node.items() if v == common)
        evidence = [
            f"{value}: {_named(sorted(n for n, v in by_node.items() if v == value))}" for value in counts
        ]
        what = key.removeprefix("version:") + (" version" if key.startswith("version:") else "")
        for node, value in by_node.items():
            if majority and value == common:
                continue
            if majority:
                text = f"parity: {what} is {value} here, {common} on {held} other node(s) ({_named(holders)})"
                status = NodeStatus.FAIL
            else:
                text = (
                    f"parity: {what} differs across the nodes with no majority ({value} here): "
                    "which is right is unknown"
                )
                status = NodeStatus.DEGRADED
            out[node].append(
                Finding(
                    stage="parity",
                    code=f"parity:{key.removeprefix('version:')}",
                    status=status,
                    text=text,
                    evidence=evidence,
                )
            )
    for findings in out.values():
        if not findings:
            findings.append(
                Finding(
                    stage="parity",
                    code="parity",
                    status=NodeStatus.PASS,
                    text=f"same versions and fabric environment as the other {len(facts) - 1} node(s)",
                )
            )
    return out
