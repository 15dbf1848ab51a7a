"""`gpufabric nodes` against recorded NodeList responses, through the official client end to end.

Every test reads real kube config files and lets ``CoreV1Api.list_node`` talk HTTP to the recorded
endpoint of kube_api.py, so the client's config loading, request building and deserialization into
``V1Node`` all run. Node objects come from tests/fixtures/inventory (provenance in its README).
"""

from __future__ import annotations

import json
import re
import socket
import sys
from pathlib import Path

import pytest
import yaml
from kube_api import TOKEN, RecordedNodesApi

from gpufabric.cli.app import main
from gpufabric.errors import GpufabricError, InputError, UsageError
from gpufabric.inventory import Inventory, kubernetes_inventory
from gpufabric.inventory.kube_client import connect, list_nodes

SEEDS = Path(__file__).parents[1] / "fixtures" / "catalog" / "seeds"  # verbatim copies of ../shared/seeds
INVENTORY_FIXTURES = Path(__file__).parents[1] / "fixtures" / "inventory"


def run_cli(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[int, str, str]:
    """Run the console entry point in-process, as `gpufabric nodes ...` would; (exit code, stdout, stderr)."""
    monkeypatch.setattr(sys, "argv", ["gpufabric", "nodes", *args])
    with pytest.raises(SystemExit) as done:
        main()
    out = capsys.readouterr()
    code = done.value.code if isinstance(done.value.code, int) else 0
    return code, out.out, out.err


def inventory_of(api: RecordedNodesApi, fixture: str, kubeconfig: Path) -> Inventory:
    api.serve_file(INVENTORY_FIXTURES / fixture)
    return kubernetes_inventory(kubeconfig=str(kubeconfig))


def by_name(inventory: Inventory) -> dict[str, tuple[str, list[str]]]:
    return {r.node.name: (r.status, [f.message for f in r.findings]) for r in inventory.nodes}


# --- seed 000: the hand-written kubectl custom-columns output --------------------------------------


def seed000_sample() -> list[str]:
    text = next(SEEDS.glob("000_*.txt")).read_text()
    block = text.split("You can expect a sample output like:\n```\n", 1)[1].split("```", 1)[0]
    return [line for line in block.splitlines() if line != "..."]


def test_seed000_kubectl_custom_columns_are_reproduced(
    nodes_api: RecordedNodesApi,
    kubeconfig: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    nodes_api.serve_file(INVENTORY_FIXTURES / "hyperpod_p4d_seed000.json")
    code, out, err = run_cli(monkeypatch, capsys, "--columns", "NAME,INSTANCETYPE,GPU,EFA")
    assert (code, err) == (0, "")
    expected = seed000_sample()
    assert expected[0].split() == ["NAME", "INSTANCETYPE", "GPU", "EFA"]
    assert out.splitlines() == expected


def test_seed000_nodes_pass_with_their_expected_efa(nodes_api: RecordedNodesApi, kubeconfig: Path) -> None:
    inventory = inventory_of(nodes_api, "hyperpod_p4d_seed000.json", kubeconfig)
    assert [r.shape for r in inventory.nodes] == ["p4d.24xlarge", "p4d.24xlarge"]
    assert [r.status for r in inventory.nodes] == ["ok", "ok"]
    assert all(r.expected and r.expected.summary == "efa=4" for r in inventory.nodes)
    assert inventory.findings == []
    assert [(g.key, len(g.nodes)) for g in inventory.groups] == [("p4d.24xlarge/efa=4", 2)]


def test_default_table_and_request(
    nodes_api: RecordedNodesApi,
    kubeconfig: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    nodes_api.serve_file(INVENTORY_FIXTURES / "eks_mixed.json")
    code, out, _ = run_cli(monkeypatch, capsys)
    assert code == 0
    header, *rows = out.split("\n\n")[0].splitlines()
    assert header.split() == [
        "NAME",
        "INSTANCETYPE",
        "ZONE",
        "GPUTYPE",
        "GPU",
        "FABRIC",
        "EXPECTED",
        "STATUS",
    ]
    cells = {row.split()[0]: row.split()[1:] for row in rows}
    assert cells["ip-10-0-13-200.us-west-2.compute.internal"] == [
        "p5.48xlarge",
        "us-west-2a",
        "nvidia-h100",
        "8",
        "<none>",
        "efa=32",
        "fail",
    ]
    assert cells["ip-10-0-14-90.us-west-2.compute.internal"][-3:] == ["efa=1", "efa=4", "warn"]
    assert (
        "fail  ip-10-0-13-200.us-west-2.compute.internal: p5 expects 32 EFA, node advertises 0: "
        "EFA device plugin missing" in out
    )
    (request,) = nodes_api.requests
    assert request["path"] == "/api/v1/nodes"
    assert request["headers"]["authorization"] == f"Bearer {TOKEN}"
    assert "labelSelector" not in request["query"]


# --- mixed pools: per-node verdicts ----------------------------------------------------------------


def test_eks_mixed_pool_verdicts(nodes_api: RecordedNodesApi, kubeconfig: Path) -> None:
    inventory = inventory_of(nodes_api, "eks_mixed.json", kubeconfig)
    nodes = by_name(inventory)
    ok_p5, plugin_missing = (
        "ip-10-0-12-41.us-west-2.compute.internal",
        "ip-10-0-13-200.us-west-2.compute.internal",
    )
    assert nodes[ok_p5] == ("ok", [])
    status, messages = nodes[plugin_missing]
    assert status == "fail"
    assert messages[0].startswith("p5 expects 32 EFA, node advertises 0: EFA device plugin missing")
    status, messages = nodes["ip-10-0-14-90.us-west-2.compute.internal"]
    assert status == "warn" and messages[0].startswith("p4d expects 4 EFA, node advertises 1: only 1 of 4")
    status, messages = nodes["ip-10-0-15-3.us-west-2.compute.internal"]
    assert status == "fail" and "device plugin runs but found no EFA device" in messages[0]
    assert nodes["ip-10-0-14-7.us-west-2.compute.internal"] == ("ok", [])
    assert nodes["ip-10-0-3-17.us-west-2.compute.internal"] == (
        "info",
        ["no accelerators: not part of the GPU fabric"],
    )
    cluster = [f.message for f in inventory.findings]
    assert any(m.startswith("1 of 3 p5.48xlarge nodes cannot give EFA x32") for m in cluster)
    assert any(m.startswith("2 of 3 p4d.24xlarge nodes cannot give EFA x4") for m in cluster)
    assert any(
        m.startswith("2 p5.48xlarge nodes with EFA span zones us-west-2a, us-west-2b") for m in cluster
    )
    assert inventory.status == "fail"


def test_gke_mixed_a3_pool_is_called_out(nodes_api: RecordedNodesApi, kubeconfig: Path) -> None:
    inventory = inventory_of(nodes_api, "gke_a3_mixed.json", kubeconfig)
    assert {r.status for r in inventory.nodes} == {"ok"}
    expected = {r.node.name: r.expected.summary for r in inventory.nodes if r.expected}
    assert sorted(set(expected.values())) == ["networks=4", "networks=8"]
    (mixed,) = inventory.findings
    assert mixed.status == "warn"
    assert mixed.message.startswith("mixed pool: 3 a3-highgpu-8g (TCPX) and 2 a3-megagpu-8g (TCPXO): ")
    assert [g.key for g in inventory.groups] == [
        "a3-highgpu-8g/gpudirect-tcpx=4",
        "a3-megagpu-8g/gpudirect-tcpxo=8",
    ]


def test_gke_a3_ultra_without_multi_networking_fails(nodes_api: RecordedNodesApi, kubeconfig: Path) -> None:
    inventory = inventory_of(nodes_api, "gke_a3_ultra.json", kubeconfig)
    nodes = by_name(inventory)
    assert nodes["gke-ml-a3-ultra-pool-7d3a2c10-b5nw"] == ("ok", [])
    status, (message,) = nodes["gke-ml-a3-ultra-pool-7d3a2c10-k1rz"]
    assert status == "fail"
    assert message.startswith(
        "a3-ultragpu-8g expects 9 GKE additional networks (8 GPUDirect-RDMA NICs + 1 gVNIC), "
        "node is attached to none: GKE multi-networking is not set up"
    )


def test_infiniband_providers(nodes_api: RecordedNodesApi, kubeconfig: Path) -> None:
    coreweave = by_name(inventory_of(nodes_api, "coreweave_ib.json", kubeconfig))
    assert coreweave["g8a1c2e"] == ("ok", [])
    status, (message,) = coreweave["g8a1c3f"]
    assert status == "fail" and message.startswith(
        "gd-8xh100ib-i128 expects InfiniBand through rdma/ib, node advertises none"
    )
    nebius = inventory_of(nodes_api, "nebius_h100.json", kubeconfig)
    (report,) = nebius.nodes
    assert report.shape == "gpu-h100-sxm.8gpu-128vcpu-1600gb"
    assert report.status == "info" and "cannot prove it" in report.findings[0].message


# --- selector, paging, formats ---------------------------------------------------------------------


def test_selector_is_sent_and_applied(
    nodes_api: RecordedNodesApi,
    kubeconfig: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    nodes_api.serve_file(INVENTORY_FIXTURES / "eks_mixed.json")
    selector = "node.kubernetes.io/instance-type=p4d.24xlarge"
    code, out, _ = run_cli(monkeypatch, capsys, "--selector", selector, "--format", "json")
    assert code == 0
    doc = json.loads(out)
    assert doc["selector"] == selector
    assert len(doc["nodes"]) == 3
    assert {n["shape"] for n in doc["nodes"]} == {"p4d.24xlarge"}
    assert nodes_api.requests[0]["query"]["labelSelector"] == [selector]


def test_pages_are_followed(nodes_api: RecordedNodesApi, kubeconfig: Path) -> None:
    nodes_api.serve_file(INVENTORY_FIXTURES / "eks_mixed.json")
    api, context = connect(kubeconfig=str(kubeconfig))
    assert context == "test-cluster"
    with api:
        nodes = list_nodes(api, page_size=2)
    assert len(nodes) == 7
    assert [r["query"].get("continue") for r in nodes_api.requests] == [None, ["2"], ["4"], ["6"]]
    assert all(r["query"]["limit"] == ["2"] for r in nodes_api.requests)


def test_yaml_output_round_trips_the_model(
    nodes_api: RecordedNodesApi,
    kubeconfig: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    nodes_api.serve_file(INVENTORY_FIXTURES / "gke_a3_mixed.json")
    code, out, _ = run_cli(monkeypatch, capsys, "--format", "yaml")
    assert code == 0
    inventory = Inventory.model_validate(yaml.safe_load(out))
    assert inventory.context == "test-cluster"
    assert len(inventory.nodes) == 5 and inventory.nodes[0].node.gke_networks == [
        "vpc1",
        "vpc2",
        "vpc3",
        "vpc4",
    ]


# --- errors: one line, the fix, the documented exit code -------------------------------------------


def assert_one_line_error(code: int, err: str, exit_code: int, *needles: str) -> None:
    assert code == exit_code, err
    assert err.startswith("Error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in err, err


FORBIDDEN = (
    'nodes is forbidden: User "system:serviceaccount:ml:runner" cannot list resource "nodes" in API group "" '
    "at the cluster scope"
)


@pytest.mark.parametrize(
    ("status", "reason", "message", "exit_code", "needles"),
    [
        (
            403,
            "Forbidden",
            FORBIDDEN,
            2,
            ("not allowed to list nodes", FORBIDDEN, "kubectl auth can-i list nodes"),
        ),
        (401, "Unauthorized", "Unauthorized", 2, ("rejected the credentials (401", "update-kubeconfig")),
        (
            500,
            "InternalError",
            "etcdserver: request timed out",
            1,
            ("HTTP 500 etcdserver: request timed out",),
        ),
    ],
)
def test_api_errors(
    nodes_api: RecordedNodesApi,
    kubeconfig: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    status: int,
    reason: str,
    message: str,
    exit_code: int,
    needles: tuple[str, ...],
) -> None:
    nodes_api.fail_with(status, reason, message)
    code, out, err = run_cli(monkeypatch, capsys)
    assert out == ""
    assert_one_line_error(code, err, exit_code, *needles)


def test_selector_the_server_rejects(
    nodes_api: RecordedNodesApi,
    kubeconfig: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = run_cli(monkeypatch, capsys, "--selector", "instance-type in (p4d)")
    assert_one_line_error(code, err, 2, "--selector 'instance-type in (p4d)'", "unable to parse requirement")


def test_missing_kubeconfig(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "absent"))
    code, _, err = run_cli(monkeypatch, capsys)
    assert_one_line_error(code, err, 2, f"no kube config at {tmp_path / 'absent'}", "KUBECONFIG")


def test_unknown_context_suggests_the_close_one(
    kubeconfig: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_cli(monkeypatch, capsys, "--context", "stagging-cluster")
    assert_one_line_error(
        code,
        err,
        2,
        "--context 'stagging-cluster'",
        "did you mean 'staging-cluster'?",
        "valid contexts: test-cluster, staging-cluster",
    )


def test_kubeconfig_that_is_not_yaml(tmp_path: Path) -> None:
    broken = tmp_path / "config"
    broken.write_text("apiVersion: v1\nclusters: [\n  - name: x\n")
    with pytest.raises(InputError, match=r"is not valid YAML"):
        connect(kubeconfig=str(broken))


def test_kubeconfig_without_a_current_context(nodes_api: RecordedNodesApi, tmp_path: Path) -> None:
    path = nodes_api.kubeconfig(tmp_path / "config", current="")
    with pytest.raises(
        UsageError,
        match=r"has contexts \(test-cluster, staging-cluster\) but none is current; "
        r"pass --context test-cluster",
    ):
        connect(kubeconfig=str(path))


def test_unreachable_api_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as sock:  # a port nobody listens on once closed
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    config = tmp_path / "config"
    config.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "gone",
                "clusters": [{"name": "c", "cluster": {"server": f"http://127.0.0.1:{port}"}}],
                "users": [{"name": "u", "user": {"token": "t"}}],
                "contexts": [{"name": "gone", "context": {"cluster": "c", "user": "u"}}],
            }
        )
    )
    code, _, err = run_cli(monkeypatch, capsys, "--kubeconfig", str(config))
    assert_one_line_error(code, err, 1, f"cannot reach the Kubernetes API server at http://127.0.0.1:{port}")
    assert re.search(r"\(context gone\)", err)


def test_unknown_column_lists_the_choices(
    kubeconfig: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_cli(monkeypatch, capsys, "--columns", "NAME,GPUS")
    assert_one_line_error(code, err, 2, "--columns 'NAME,GPUS': unknown column GPUS", "NAME,INSTANCETYPE")


def test_errors_are_gpufabric_errors(nodes_api: RecordedNodesApi, kubeconfig: Path) -> None:
    nodes_api.fail_with(503, "ServiceUnavailable", "the server is currently unable to handle the request")
    with pytest.raises(GpufabricError) as caught:
        kubernetes_inventory()
    assert caught.value.exit_code == 1
