"""Kubernetes: manifests validate against the official schemas (strict), the planner's patch and the user's
pod_config merge into the pod, and the client code runs through its REST seam (ApiServerRecorder runs
each pod's command for real) with every object deleted afterwards, on success, failure and timeout."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from k8s_apiserver import ApiServerRecorder

from gpufabric.errors import LaunchError, UsageError
from gpufabric.launch.base import LaunchPlan, RankProgram
from gpufabric.launch.kubernetes import (
    KubernetesLauncher,
    KubernetesOptions,
    validate_manifests,
)
from gpufabric.launch.kubernetes_run import load_api_client
from gpufabric.launch.registry import plan_task
from gpufabric.launch.task_program import task_program
from gpufabric.report.formats import Format
from gpufabric.report.launch_plan_render import render_launch_plan
from gpufabric.task import load_task, task_from_text

FIXTURES = Path(__file__).parents[1] / "fixtures" / "launch"


def _kinds(manifests: list[dict[str, Any]]) -> list[str]:
    return [m["kind"] for m in manifests]


def test_seed_task_renders_valid_indexed_job_with_user_pod_config(tmp_path: Path) -> None:
    task = load_task(FIXTURES / "nccl_efa.yaml")
    _, plan = plan_task(task, "kubernetes", workdir=tmp_path)
    validate_manifests(plan.manifests)  # strict: an unknown or misspelt field fails
    assert _kinds(plan.manifests) == ["Service", "Job"]
    service, job = plan.manifests
    assert service["spec"]["clusterIP"] == "None"
    spec: Any = job["spec"]
    assert (spec["completionMode"], spec["completions"], spec["parallelism"]) == ("Indexed", 2, 2)
    pod = spec["template"]["spec"]
    assert pod["subdomain"] == "nccl-test-efa" and pod["restartPolicy"] == "Never"
    main = pod["containers"][0]
    assert main["image"] == "public.ecr.aws/hpc-cloud/nccl-tests:latest"
    # The seed's pod_config (EFA 4) merged into our main container next to the GPUs of A100:8.
    assert main["resources"]["limits"] == {"nvidia.com/gpu": "8", "vpc.amazonaws.com/efa": "4"}
    env = {e["name"]: e for e in main["env"]}
    assert env["GPUFABRIC_NODE_IPS"]["value"] == "nccl-test-efa-0.nccl-test-efa,nccl-test-efa-1.nccl-test-efa"
    assert env["MASTER_ADDR"]["value"] == "nccl-test-efa-0.nccl-test-efa"
    assert "job-completion-index" in env["RANK"]["valueFrom"]["fieldRef"]["fieldPath"]


def test_planner_patch_then_user_pod_config_user_wins(tmp_path: Path) -> None:
    program = RankProgram(argv=["true"], nranks=2, nodes=2, gpus_per_node=8, workdir=tmp_path, label="t")
    patch = {
        "spec": {
            "containers": [
                {
                    "resources": {"limits": {"vpc.amazonaws.com/efa": 32}},
                    "securityContext": {"capabilities": {"add": ["IPC_LOCK"]}},
                }
            ],
            "volumes": [{"name": "dshm", "emptyDir": {"medium": "Memory"}}],
        }
    }
    user = {"spec": {"containers": [{"resources": {"limits": {"vpc.amazonaws.com/efa": 16}}}]}}
    options = KubernetesOptions(image="img:1", plan_patch=patch, pod_config=user)
    plan = KubernetesLauncher(options).render(program)
    validate_manifests(plan.manifests)
    pod: Any = plan.manifests[-1]["spec"]["template"]["spec"]
    assert pod["containers"][0]["resources"]["limits"]["vpc.amazonaws.com/efa"] == "16"
    assert pod["containers"][0]["securityContext"]["capabilities"]["add"] == ["IPC_LOCK"]
    assert pod["volumes"][0]["name"] == "dshm"
    assert any("vpc.amazonaws.com/efa: plan 32, yours 16" in note for note in plan.notes)


def test_secrets_go_to_a_secret_and_are_redacted_when_printed(tmp_path: Path) -> None:
    task = task_from_text(
        "name: s\nrun: echo hi\nresources:\n  image_id: docker:ubuntu\nenvs:\n  HF_TOKEN: hf_abcdef",
        source="t",
    )
    _, plan = plan_task(task, "kubernetes", workdir=tmp_path, settings=None)
    secret = plan.manifests[0]
    assert secret["kind"] == "Secret" and secret["stringData"] == {"HF_TOKEN": "hf_abcdef"}
    env = {e["name"]: e for e in plan.manifests[-1]["spec"]["template"]["spec"]["containers"][0]["env"]}  # type: ignore[index]
    assert env["HF_TOKEN"]["valueFrom"]["secretKeyRef"] == {"name": "s", "key": "HF_TOKEN"}
    shown = plan.redacted().manifests
    assert shown[0]["stringData"] == {"HF_TOKEN": "<redacted>"}
    assert "hf_abcdef" not in str(shown) and "hf_abcdef" not in str(plan.redacted().commands)
    # What plan.json records and --dry-run --format json prints: the one redacted form, the Secret hidden.
    recorded = plan.recorded_json()
    assert "hf_abcdef" not in recorded
    assert LaunchPlan.model_validate_json(recorded) == plan.redacted()
    assert render_launch_plan(plan, Format.JSON) == recorded
    assert "hf_abcdef" not in render_launch_plan(plan, Format.TEXT)


def test_invalid_user_pod_config_is_caught_by_the_schema(tmp_path: Path) -> None:
    program = RankProgram(argv=["true"], nranks=1, workdir=tmp_path)
    options = KubernetesOptions(image="img", pod_config={"spec": {"containers": [{"resourcez": {}}]}})
    plan = KubernetesLauncher(options).render(program)
    with pytest.raises(UsageError, match=r"rendered Job is not valid Kubernetes 1\.37\.0"):
        validate_manifests(plan.manifests)


def test_no_image_and_several_ranks_per_pod_are_usage_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"set resources.image_id: docker:IMAGE .* or pass --image"):
        KubernetesLauncher().render(RankProgram(argv=["true"], nranks=1, workdir=tmp_path))
    with pytest.raises(UsageError, match=r"one process per pod"):
        KubernetesLauncher(KubernetesOptions(image="i")).render(
            RankProgram(argv=["true"], nranks=4, nodes=2, workdir=tmp_path)
        )


def _launch(tmp_path: Path, recorder: ApiServerRecorder, run: str, **options: Any) -> Any:
    task = task_from_text(
        f"name: k\nnum_nodes: 2\nresources:\n  accelerators: H100:2\nrun: |\n  {run}\n", source="t"
    )
    program = task_program(task, workdir=tmp_path)
    launcher = KubernetesLauncher(
        KubernetesOptions(image="ubuntu:24.04", poll_interval_s=0.01, **options),
        api_client=recorder.api_client(),
    )
    lines: list[tuple[str, str]] = []
    outcome = launcher.execute(
        launcher.render(program), on_output=lambda p, s: lines.append((p, s)), timeout_s=30
    )
    return outcome, lines


def test_execute_applies_follows_logs_and_cleans_up(tmp_path: Path) -> None:
    recorder = ApiServerRecorder()
    outcome, lines = _launch(
        tmp_path, recorder, 'echo "node=$SKYPILOT_NODE_RANK ips=$SKYPILOT_NODE_IPS" | paste -sd,'
    )
    assert outcome.ok, outcome.failure
    assert ("(node 0)", "node=0 ips=k-0.k,k-1.k") in lines
    assert ("(node 1)", "node=1 ips=k-0.k,k-1.k") in lines
    writes = [(r.method, r.path) for r in recorder.requests if r.method != "GET"]
    assert writes == [
        ("POST", "/api/v1/namespaces/default/services"),
        ("POST", "/apis/batch/v1/namespaces/default/jobs"),
        ("DELETE", "/apis/batch/v1/namespaces/default/jobs/k"),
        ("DELETE", "/api/v1/namespaces/default/services/k"),
    ]
    assert recorder.objects == {}  # Service and Job deleted
    deletes = [r for r in recorder.requests if r.method == "DELETE"]
    assert all(r.query.get("propagationPolicy") == ["Background"] for r in deletes)  # pods go with the Job


def test_failed_pod_fails_with_rank_host_and_last_line(tmp_path: Path) -> None:
    recorder = ApiServerRecorder(node_name="ip-10-0-0-7")
    outcome, _ = _launch(tmp_path, recorder, 'echo "about to fail"; exit $((3 * SKYPILOT_NODE_RANK))')
    assert not outcome.ok
    assert outcome.failure == "rank 1 on ip-10-0-0-7 exited with code 3; last output: 'about to fail'"
    assert recorder.objects == {}


def test_timeout_reports_pending_pods_and_deletes_everything(tmp_path: Path) -> None:
    recorder = ApiServerRecorder(start_pods=False)  # the pods never get scheduled
    task = task_from_text("name: k\nrun: echo x", source="t")
    launcher = KubernetesLauncher(
        KubernetesOptions(image="i", poll_interval_s=0.05), api_client=recorder.api_client()
    )
    outcome = launcher.execute(launcher.render(task_program(task, workdir=tmp_path)), timeout_s=0.3)
    assert outcome.timed_out and outcome.failure is not None
    assert "node 0: no pod created" in outcome.failure and "deleted" in outcome.failure
    assert recorder.objects == {}


def test_existing_job_is_a_clear_conflict(tmp_path: Path) -> None:
    recorder = ApiServerRecorder()
    _launch(tmp_path, recorder, "true", keep=True)
    with pytest.raises(LaunchError, match=r"refused the Service default/k \(409: .*already exists\); delete"):
        _launch(tmp_path, recorder, "true")


def test_missing_kube_config_is_one_line_with_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    with pytest.raises(LaunchError) as info:
        load_api_client(KubernetesOptions(kubeconfig=str(tmp_path / "missing-config")))
    message = str(info.value)
    assert "\n" not in message
    assert "no usable Kubernetes config" in message and "aws eks update-kubeconfig" in message
