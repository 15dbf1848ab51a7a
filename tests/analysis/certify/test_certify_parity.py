"""Parity across nodes, on real probe ranks: 3 local nodes, one given another environment by the test
override (``GPUFABRIC_NODE_ENV``, applied by that node's probe to itself, as a node whose image sets it):
``NCCL_P2P_DISABLE=1`` or a different ``NCCL_SOCKET_IFNAME`` on one node fails that node (and only it)
with both values and who holds them; the preflight stage alone runs (one job, no torch).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gpufabric.analysis.certify import NodeStatus, parse_node_env
from gpufabric.errors import UsageError
from gpufabric.jobs import CertifyRequest, Execution, prepare_certify
from gpufabric.jobs.certify_run import CertifyState, preflight_stage


def _preflight(tmp_path: Path, environ: dict[str, str]) -> CertifyState:
    prepared = prepare_certify(
        CertifyRequest(nodes=3, run_dir=tmp_path / "run"),
        Execution(environ={**environ, "CUDA_VISIBLE_DEVICES": ""}),
    )
    state = CertifyState(prepared, None)
    preflight_stage(state)
    return state


@pytest.mark.parametrize(
    ("override", "key"),
    [
        ("node=1:NCCL_P2P_DISABLE=1", "NCCL_P2P_DISABLE"),
        ("node=2:NCCL_SOCKET_IFNAME=lo", "NCCL_SOCKET_IFNAME"),
    ],
)
def test_one_node_with_another_environment_fails_parity(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, override: str, key: str
) -> None:
    monkeypatch.setenv("NCCL_SOCKET_IFNAME", "eth")
    monkeypatch.setenv("GPUFABRIC_NODE_ENV", override)
    state = _preflight(tmp_path, {"NCCL_SOCKET_IFNAME": "eth", "GPUFABRIC_NODE_ENV": override})
    odd = f"node000{override[5]}"
    assert state.facts[odd].fabric_env[key] in ("1", "lo") and state.facts[odd].node_env_override == override
    flagged = {
        node
        for node, findings in state.findings.items()
        if any(f.code == f"parity:{key}" and f.status is NodeStatus.FAIL for f in findings)
    }
    assert flagged == {odd}
    (finding,) = [f for f in state.findings[odd] if f.code == f"parity:{key}"]
    assert "on 2 other node(s)" in finding.text and len(finding.evidence) == 2
    assert state.failed(odd) and state.still_in() == [
        n for n in ("node0000", "node0001", "node0002") if n != odd
    ]


def test_nodes_alike_pass_parity(tmp_path: Path) -> None:
    state = _preflight(tmp_path, {"NCCL_DEBUG": "WARN"})
    assert all(not state.failed(node) for node in state.findings)
    assert all(any(f.code == "parity" for f in findings) for findings in state.findings.values())


@pytest.mark.parametrize("text", ["node=1", "1:NCCL_X=1", "node=a:NCCL_X=1", "node=1:=1"])
def test_a_malformed_override_is_one_line(text: str) -> None:
    with pytest.raises(UsageError, match=r"GPUFABRIC_NODE_ENV: .* is not an override"):
        parse_node_env(text)


def test_an_override_of_a_node_that_does_not_exist_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"names node 5, but nodes are 0\.\.2"):
        prepare_certify(
            CertifyRequest(nodes=3, run_dir=tmp_path / "r"),
            Execution(environ={"GPUFABRIC_NODE_ENV": "node=5:NCCL_X=1"}),
        )
