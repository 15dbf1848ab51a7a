"""Kubernetes least privilege: every catalog shape's rendered pods, and the launcher's Indexed Job.

Rule: no container is privileged (the GKE RxDM sidecars get NET_ADMIN only, as Google's manifests); every
privilege in a rendered pod (privileged, added capabilities, hostNetwork/PID/IPC)
is listed in ``plan.privileges`` with a reason. One named exception: Oracle OKE's main container is
privileged with hostNetwork, because OKE exposes /dev/infiniband without an RDMA device plugin (the
plan says so); the test pins it to OCI shapes so it cannot spread.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gpufabric.catalog.loader import load_catalog
from gpufabric.catalog.model import Cloud
from gpufabric.launch.base import RankProgram
from gpufabric.launch.kubernetes import KubernetesLauncher, KubernetesOptions
from gpufabric.planner.api import plan
from gpufabric.planner.model import PlanRequest, Platform

PRIVILEGED_SIDECARS: set[str] = set()
OKE_EXCEPTION = "main"  # OCI only: see the module docstring


def pod_specs(document: Any, path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every pod spec (a mapping with a ``containers`` list) anywhere in a document tree."""
    if isinstance(document, dict):
        if isinstance(document.get("containers"), list):
            yield path, document
        for key, value in document.items():
            yield from pod_specs(value, f"{path}/{key}")
    elif isinstance(document, list):
        for index, value in enumerate(document):
            yield from pod_specs(value, f"{path}[{index}]")


def grants(spec: dict[str, Any]) -> list[tuple[str, str]]:
    """(where, grant) for every privilege a pod spec takes."""
    found = [("pod", key) for key in ("hostNetwork", "hostPID", "hostIPC") if spec.get(key)]
    for container in [*spec.get("containers", []), *spec.get("initContainers", [])]:
        name = container.get("name") or "main"  # the pod_config patch leaves the main container unnamed
        context = container.get("securityContext") or {}
        if context.get("privileged"):
            found.append((name, "privileged"))
        if context.get("allowPrivilegeEscalation"):
            found.append((name, "allowPrivilegeEscalation"))
        for capability in (context.get("capabilities") or {}).get("add", []):
            found.append((name, capability))
    return found


INSTANCES = [inst for inst in load_catalog().instances]


@pytest.mark.parametrize("nodes", [2, 32])
@pytest.mark.parametrize("instance", INSTANCES, ids=lambda inst: inst.name)
def test_every_catalog_shape_renders_least_privilege_pods(instance: Any, nodes: int) -> None:
    result = plan(PlanRequest(instance_type=instance.name, platform=Platform.KUBERNETES, nodes=nodes))
    listed = {(p.where, p.grant) for p in result.privileges}
    assert all(p.why.strip() for p in result.privileges), result.privileges
    specs = list(pod_specs(result.documents))
    assert specs, "the kubernetes plan renders no pod"
    for path, spec in specs:
        for where, grant in grants(spec):
            # Every privilege taken is stated, with its reason, in the plan.
            assert any(w == where and grant in g for w, g in listed), (
                f"{path}: {where} {grant} not in the plan"
            )
            if grant != "privileged":
                continue
            if where in PRIVILEGED_SIDECARS:
                continue
            assert where == OKE_EXCEPTION and instance.cloud is Cloud.OCI, f"{path}: {where} is privileged"


def test_the_oke_exception_is_stated_with_its_reason() -> None:
    oci = [inst for inst in INSTANCES if inst.cloud is Cloud.OCI]
    assert oci, "the catalog lost its OCI shapes: drop the OKE exception"
    for inst in oci:
        result = plan(PlanRequest(instance_type=inst.name, platform=Platform.KUBERNETES, nodes=2))
        reasons = [p.why for p in result.privileges if p.grant == "privileged"]
        assert reasons and "RDMA device plugin" in reasons[0]


def _job(tmp_path: Path, patch: dict[str, Any]) -> list[dict[str, object]]:
    launcher = KubernetesLauncher(KubernetesOptions(image="nccl-tests:1", plan_patch=patch))
    program = RankProgram(argv=["python", "-m", "gpufabric.engines.torch.rank"], nranks=2, nodes=2,
                          gpus_per_node=8, workdir=tmp_path)  # fmt: skip
    return launcher.render(program).manifests


def test_the_launcher_job_takes_no_privilege_of_its_own(tmp_path: Path) -> None:
    specs = list(pod_specs(_job(tmp_path, {})))
    assert specs
    for path, spec in specs:
        assert grants(spec) == [], path


@pytest.mark.parametrize("instance", INSTANCES, ids=lambda inst: inst.name)
def test_the_launcher_job_takes_only_what_the_plan_states(tmp_path: Path, instance: Any) -> None:
    result = plan(PlanRequest(instance_type=instance.name, platform=Platform.KUBERNETES, nodes=2))
    listed = {(p.where, p.grant) for p in result.privileges}
    for path, spec in pod_specs(_job(tmp_path, result.documents["kubernetes.pod_config"])):
        for where, grant in grants(spec):
            assert any(grant in g for w, g in listed if w in (where, "main", "pod")), (
                f"{path}: {where} {grant}"
            )
            if grant == "privileged" and where not in PRIVILEGED_SIDECARS:
                assert instance.cloud is Cloud.OCI, f"{path}: {where} is privileged"
