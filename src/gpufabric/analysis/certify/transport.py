"""Transport proof per node: what NCCL's own log says carried the node's traffic, by the doctor's rules.

The node's own sweep (the node stage) ran with NCCL's INFO log captured; its ``RunResult`` carries the
attestation (``nccl_logs``). The doctor's transport checks (``analysis.doctor.diagnose``: NCCL output
present, the expected fabric in use, the intra-node links, the net plugin) judge it against the node's
expectation (``--expect`` / ``--instance-type``): a FAIL fails the node, a WARN degrades it, and a PASS
names the transports NCCL logged. Where no NCCL ran (gloo ranks on CPU) there is nothing to prove, and
the finding says so instead of passing it as proven.
"""

from __future__ import annotations

from gpufabric.analysis.certify.model import Finding, NodeStatus
from gpufabric.analysis.doctor import Evidence, Expectation, Verdict, diagnose
from gpufabric.hardware import NicKind
from gpufabric.results import load_run_shapes
from gpufabric.results.model import RunResult

# The doctor's checks that say which transport ran (the rest judge bandwidth, which the node stage does),
# and NCCL 2.31+'s own init diagnostics (a GPU pair that failed its P2P check, settings that differ).
TRANSPORT_CHECKS = ("nccl-output", "fabric-in-use", "intra-node", "net-plugin", "gdr", "nccl-diagnostics")


def transport_findings(
    node: str, result: RunResult, expectation: Expectation, sources: list[str]
) -> list[Finding]:
    """The node's transport proof from its own sweep's NCCL log, one finding per doctor check."""
    if (result.metadata.backend or "").lower() != "nccl":
        return [
            Finding(
                stage="transport",
                code="transport:no-nccl",
                status=NodeStatus.PASS,
                text=f"no NCCL ran ({result.metadata.backend or 'unknown'} ranks): no transport to "
                "prove on this node; NCCL on GPUs is what the proof reads",
            )
        ]
    report = diagnose(
        Evidence(label=node, sources=sources, result=result, attestation=result.attestation), expectation
    )
    findings = []
    only_sockets = _sockets_only(result) and expectation.fabric is None
    for check in report.checks:
        if check.id not in TRANSPORT_CHECKS:
            continue
        status = {Verdict.FAIL: NodeStatus.FAIL, Verdict.WARN: NodeStatus.DEGRADED}.get(
            check.verdict, NodeStatus.PASS
        )
        if check.verdict is Verdict.SKIP:
            continue
        text = f"{check.title}: {check.cause}" + (f"; fix: {check.fix}" if check.fix else "")
        if check.id == "fabric-in-use" and check.verdict is Verdict.WARN and only_sockets:
            # The doctor cannot know the node has nothing faster; the node's own snapshot does.
            status = NodeStatus.PASS
            text = (
                f"{check.title}: {check.cause.split(';')[0]}; the node's snapshot lists no RDMA or EFA NIC, "
            )
            text += "so TCP sockets are its only path between nodes (pass --expect FABRIC to require one)"
        findings.append(
            Finding(
                stage="transport",
                code=f"transport:{check.id}",
                status=status,
                text=text,
                evidence=list(check.evidence),
            )
        )
    if not findings:
        findings.append(
            Finding(
                stage="transport",
                code="transport:unproven",
                status=NodeStatus.DEGRADED,
                text="NCCL ran but its log proves no transport (NCCL_DEBUG=INFO missing?)",
            )
        )
    return findings


def _sockets_only(result: RunResult) -> bool:
    """True when every host of the run recorded a snapshot and none lists an RDMA or EFA device."""
    shapes = load_run_shapes(result)
    return bool(shapes) and all(
        all(nic.kind is NicKind.ETHERNET or nic.virtual for nic in shape.nics) for shape in shapes.values()
    )
