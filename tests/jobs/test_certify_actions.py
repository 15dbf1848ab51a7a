"""certify's scheduler actions: what is printed, what ``--apply`` sends, and that every Kubernetes
request is a valid Node by the Kubernetes OpenAPI schema (kubernetes-validate, strict).

No Kubernetes API server installs from the package registries here (Debian ships kubectl and etcd, not
kube-apiserver; PyPI has none), so the official client's requests are checked against the schema and
recorded at the client's REST seam (``ApiClient.rest_client``): the real ``CoreV1Api`` builds them (path,
method, patch content type), a small node store answers. This never met a real server. The Slurm
actions run against the real Slurm of the test setup (``tests/launch/test_certify_slurm.py``).
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest

pytest.importorskip("kubernetes")
pytest.importorskip("kubernetes_validate")
from kubernetes import client
from kubernetes.client import rest

sys.path.insert(0, str(Path(__file__).parents[1] / "launch"))
from k8s_apiserver import _Response

from gpufabric.analysis.certify import Finding, NodeCertificate, NodeStatus, certificate
from gpufabric.errors import UsageError
from gpufabric.jobs.certify_actions import (
    TAINT_KEY,
    apply_kubernetes,
    kubernetes_actions,
    node_patch,
    plan_actions,
    slurm_actions,
    validate_patch,
)

NOW = datetime(2026, 11, 27, 12, 0, tzinfo=timezone.utc)


def _cert(node: str, status: NodeStatus) -> NodeCertificate:
    findings = [
        Finding(
            stage="between",
            code="slow" if status is NodeStatus.FAIL else "between",
            status=status,
            text="slow: convicted by group tests" if status is NodeStatus.FAIL else "passed",
        )
    ]
    return certificate(
        node, findings, facts=None, settings={}, not_run={}, created=NOW, valid_hours=24, run_dir="/runs/x"
    )


CERTS = {
    "gpu-a": _cert("gpu-a", NodeStatus.FAIL),
    "gpu-b": _cert("gpu-b", NodeStatus.PASS),
    "gpu-c": _cert("gpu-c", NodeStatus.DEGRADED),
}


def test_slurm_drains_the_failed_resumes_the_passed_and_leaves_the_degraded() -> None:
    actions = {a.node: a for a in slurm_actions(CERTS)}
    assert actions["gpu-a"].command == [
        "scontrol",
        "update",
        "nodename=gpu-a",
        "state=drain",
        "reason=gpufabric certify: slow: convicted by group tests",
    ]
    assert actions["gpu-b"].command == ["scontrol", "update", "nodename=gpu-b", "state=resume"]
    assert "gpu-c" not in actions and not any(a.applied for a in actions.values())


def test_every_kubernetes_request_is_a_valid_node() -> None:
    actions, notes = plan_actions("kubernetes", CERTS, numbered=False)
    assert notes == [] and len(actions) == 3
    failed = next(a for a in actions if a.node == "gpu-a")
    assert failed.request == {
        "metadata": {
            "labels": {"gpufabric.io/certify": "fail", "gpufabric.io/certified-until": "2026-11-28T12-00-00Z"}
        },
        "spec": {"taints": [{"key": TAINT_KEY, "value": "fail", "effect": "NoSchedule"}]},
    }
    passed = next(a for a in actions if a.node == "gpu-b")
    assert passed.request is not None and passed.request["spec"] == {"taints": []}


def test_the_schema_check_refuses_an_invalid_node() -> None:
    bad = node_patch(CERTS["gpu-a"], [])
    bad["spec"]["taints"][0]["effect"] = 7  # not a string
    with pytest.raises(UsageError, match=r"rendered Node is not valid Kubernetes .*spec.taints"):
        validate_patch("gpu-a", bad)


def test_numbered_nodes_get_no_actions() -> None:
    actions, notes = plan_actions("slurm", CERTS, numbered=True)
    assert actions == [] and "the nodes are numbered" in notes[0]


@dataclass
class NodeStore:
    """The client's REST seam for GET and PATCH of /api/v1/nodes/NAME, every request kept."""

    nodes: dict[str, dict[str, Any]]
    requests: list[tuple[str, str, Any, str]] = field(default_factory=list)

    def request(
        self,
        method: str,
        url: str,
        headers: Any = None,
        body: Any = None,
        post_params: Any = None,
        _request_timeout: Any = None,
    ) -> rest.RESTResponse:
        path = urlparse(url).path
        name = path.removeprefix("/api/v1/nodes/")
        self.requests.append((method, path, body, (headers or {}).get("Content-Type", "")))
        node = self.nodes[name]
        if method == "PATCH":
            node["metadata"].setdefault("labels", {}).update(body["metadata"]["labels"])
            node["spec"]["taints"] = body["spec"]["taints"]
        response = rest.RESTResponse(_Response(200, "OK", json.dumps(node).encode()))
        response.read()
        return response


def test_apply_keeps_the_nodes_other_taints_through_the_official_client() -> None:
    other = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
    store = NodeStore(
        {
            name: {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": name, "labels": {}},
                "spec": {"taints": [dict(other)]},
            }
            for name in ("gpu-a", "gpu-b")
        }
    )
    api = client.ApiClient(client.Configuration())
    api.rest_client = store
    certs = {name: CERTS[name] for name in ("gpu-a", "gpu-b")}
    done = apply_kubernetes(kubernetes_actions(certs), certs, client.CoreV1Api(api))
    assert [(a.node, a.applied, a.outcome) for a in done] == [
        ("gpu-a", True, "done"),
        ("gpu-b", True, "done"),
    ]
    patches = [r for r in store.requests if r[0] == "PATCH"]
    assert [r[1] for r in patches] == ["/api/v1/nodes/gpu-a", "/api/v1/nodes/gpu-b"]
    assert all(r[3] == "application/strategic-merge-patch+json" for r in patches), patches
    assert store.nodes["gpu-a"]["spec"]["taints"] == [
        other,
        {"key": TAINT_KEY, "value": "fail", "effect": "NoSchedule"},
    ]
    assert store.nodes["gpu-b"]["spec"]["taints"] == [other]
    assert store.nodes["gpu-a"]["metadata"]["labels"]["gpufabric.io/certify"] == "fail"
