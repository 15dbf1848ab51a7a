"""Big Kubernetes plans render one Indexed Job + headless Service, not one Pod per node (issue 8, part 4).

The Job's pod template must be exactly the Pod a small plan renders (less the per-pod name), every object
must validate against the real published schema, and the plan must not grow with the node count.
"""

from __future__ import annotations

import json

import kubernetes_validate
import pytest

from gpufabric.catalog import list_instances
from gpufabric.planner import PlanRequest, Platform, plan
from gpufabric.planner.kubernetes import JOB_LABEL, POD_MANIFESTS_MAX_NODES
from gpufabric.report.plain import dump_public

K8S_VERSION = "1.30.0"
BIG = POD_MANIFESTS_MAX_NODES + 1


@pytest.mark.parametrize("instance", [inst.name for inst in list_instances()])
def test_big_plan_is_one_indexed_job_that_validates(instance: str) -> None:
    small = plan(PlanRequest(instance_type=instance, platform=Platform.KUBERNETES, nodes=2))
    big = plan(PlanRequest(instance_type=instance, platform=Platform.KUBERNETES, nodes=BIG))
    assert "kubernetes.pods" not in big.documents
    job, service = big.documents["kubernetes.job"], big.documents["kubernetes.service"]
    kubernetes_validate.validate(job, K8S_VERSION, strict=True)
    kubernetes_validate.validate(service, K8S_VERSION, strict=True)
    spec = job["spec"]
    assert (spec["completionMode"], spec["completions"], spec["parallelism"]) == ("Indexed", BIG, BIG)
    # the template is the small plan's pod, less its name, plus the DNS subdomain of the Service
    pod = small.documents["kubernetes.pods"][0]
    expected = {"metadata": {k: v for k, v in pod["metadata"].items() if k != "name"}, "spec": pod["spec"]}
    expected["spec"] = {**pod["spec"], "subdomain": "gpufabric"}
    assert spec["template"] == expected
    assert service["metadata"]["name"] == "gpufabric" and service["spec"]["clusterIP"] == "None"
    assert service["spec"]["selector"] == {JOB_LABEL: "gpufabric"} == spec["template"]["metadata"]["labels"]
    assert big.documents["kubernetes.pod_config"] == small.documents["kubernetes.pod_config"]


def test_small_plans_keep_one_pod_per_node() -> None:
    result = plan(PlanRequest(instance_type="p5.48xlarge", nodes=POD_MANIFESTS_MAX_NODES))
    pods = result.documents["kubernetes.pods"]
    assert [p["metadata"]["name"] for p in pods] == [f"gpufabric-{i}" for i in range(len(pods))]
    assert len(pods) == POD_MANIFESTS_MAX_NODES and "kubernetes.job" not in result.documents
    pods[0]["spec"]["containers"][0]["env"].append({"name": "X", "value": "1"})
    assert pods[1]["spec"]["containers"][0]["env"][-1] != {"name": "X", "value": "1"}, "pods share state"


def test_plan_size_does_not_grow_with_nodes() -> None:
    def printed(nodes: int) -> str:
        result = plan(PlanRequest(instance_type="p5.48xlarge", nodes=nodes))
        return dump_public(result.model_dump(mode="json", exclude={"request"}), "yaml")

    small, big = printed(BIG), printed(4096)
    assert big.replace("4096", str(BIG)) == small
    assert len(big) < 16_000


def test_user_restart_policy_always_cannot_break_the_job() -> None:
    user = {"spec": {"restartPolicy": "Always", "subdomain": "mine"}}
    result = plan(PlanRequest(instance_type="p4d.24xlarge", nodes=BIG, pod_config=user))
    job, service = result.documents["kubernetes.job"], result.documents["kubernetes.service"]
    assert job["spec"]["template"]["spec"]["restartPolicy"] == "Never"
    assert any("restartPolicy 'Always' cannot run in a Job" in w for w in result.warnings)
    assert service["metadata"]["name"] == job["spec"]["template"]["spec"]["subdomain"] == "mine"
    kubernetes_validate.validate(job, K8S_VERSION, strict=True)
    assert json.loads(json.dumps(job)) == job
