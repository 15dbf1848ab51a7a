"""Every catalog entry x platform plans, and every body validates against the real published schemas.

EC2 bodies: botocore's own EC2 service model and ParamValidator. GCE bodies: google-cloud-compute message
types parsed from the REST JSON (unknown fields fail). Kubernetes objects: kubernetes-validate, strict.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import botocore.session
import jsonschema
import kubernetes_validate
import pytest
from botocore.validate import ParamValidator
from google.cloud import compute_v1

from gpufabric.catalog import Cloud, list_instances
from gpufabric.errors import CatalogError
from gpufabric.planner import Plan, PlanRequest, Platform, Tier, plan
from gpufabric.planner.skypilot_limits import skypilot_vm_limit

K8S_VERSION = "1.30.0"
GCE_TYPES = {
    "compute.networks": compute_v1.Network,
    "compute.subnetworks": compute_v1.Subnetwork,
    "compute.firewalls": compute_v1.Firewall,
    "compute.resourcePolicies": compute_v1.ResourcePolicy,
    "compute.instances": compute_v1.Instance,
}


REFERENCES = Path(__file__).parents[1] / "fixtures" / "references" / "skypilot"


@cache
def skypilot_schema(name: str) -> Any:
    """SkyPilot 0.14.1's own JSON schema (sky.utils.schemas, vendored by regenerate_skypilot.py)."""
    return json.loads((REFERENCES / f"{name}_schema.json").read_text())


def _enum(*, case: bool) -> Any:
    def check(validator: Any, enums: list[str], instance: str, schema: Any) -> Any:
        del validator, schema
        if (instance if case else instance.lower()) not in [e if case else e.lower() for e in enums]:
            yield jsonschema.ValidationError(f"{instance!r} is not one of {enums!r}")

    return check


# SkyPilot's validator (sky/utils/validator.py, 0.14.1): Draft 7 plus its two enum keywords.
SKY_VALIDATOR = jsonschema.validators.extend(
    jsonschema.Draft7Validator,
    validators={"case_insensitive_enum": _enum(case=False), "case_sensitive_enum": _enum(case=True)},
)


def validate_skypilot_task(task: dict[str, Any]) -> None:
    """The task against SkyPilot's task schema, its ``resources`` and ``config`` against theirs, and the
    checks SkyPilot makes outside the schema (network_tier values in sky/resources.py; GCP's machine-type
    check for ``best`` in sky/provision/gcp/config.py)."""
    body = {k: v for k, v in task.items() if k != "config"}
    SKY_VALIDATOR(skypilot_schema("task")).validate(body)
    SKY_VALIDATOR(skypilot_schema("resources")).validate(task["resources"])
    if "config" in task:
        SKY_VALIDATOR(skypilot_schema("config")).validate(task["config"])
    tiers = json.loads((REFERENCES / "resources.json").read_text())["network_tiers"]
    if task["resources"].get("network_tier") not in tiers:
        raise jsonschema.ValidationError(f"network_tier must be one of {tiers}")
    if task["resources"].get("network_tier") == "best" and task["resources"].get("infra") == "gcp":
        allowed = json.loads((REFERENCES / "gcp.json").read_text())["GPU_DIRECT_TCPX_INSTANCE_TYPES"]
        assert task["resources"]["instance_type"] in allowed, "SkyPilot raises at launch"


@cache
def ec2_model() -> Any:
    return botocore.session.get_session().get_service_model("ec2")


def validate_ec2(operation: str, body: dict[str, Any]) -> None:
    shape = ec2_model().operation_model(operation).input_shape
    report = ParamValidator().validate(body, shape)
    assert not report.has_errors(), f"{operation}: {report.generate_report()}"


def validate_plan(result: Plan) -> int:
    """Validate every document; returns how many were checked against a real schema."""
    checked = 0
    for key, doc in result.documents.items():
        if key.startswith("ec2."):
            validate_ec2(key.removeprefix("ec2."), doc)
            checked += 1
        elif key in GCE_TYPES:
            for body in doc:
                GCE_TYPES[key].from_json(json.dumps(body))  # raises on unknown fields / wrong types
                checked += 1
        elif key == "kubernetes.pods":
            for pod in doc:
                kubernetes_validate.validate(pod, K8S_VERSION, strict=True)
                checked += 1
        elif key == "kubernetes.configmap":
            kubernetes_validate.validate(doc, K8S_VERSION, strict=True)
            checked += 1
        elif key == "skypilot.task":
            validate_skypilot_task(doc)
            checked += 1
        if key == "skypilot.task" and "config" in doc and "kubernetes" in doc["config"]:
            pod = {"apiVersion": "v1", "kind": "Pod", **doc["config"]["kubernetes"]["pod_config"]}
            pod["metadata"] = {**pod.get("metadata", {}), "name": "check"}
            for container in pod["spec"]["containers"]:
                container.setdefault("name", "main")
                container.setdefault("image", "check")
            kubernetes_validate.validate(pod, K8S_VERSION, strict=True)
            checked += 1
    return checked


CASES = [(inst.name, platform) for inst in list_instances() for platform in Platform]


@pytest.mark.parametrize(("instance", "platform"), CASES)
def test_every_entry_and_platform_validates(instance: str, platform: Platform) -> None:
    request = PlanRequest(instance_type=instance, platform=platform, nodes=2)
    cloud = next(i.cloud for i in list_instances() if i.name == instance)
    if platform is Platform.VM and cloud not in (Cloud.AWS, Cloud.GCP):
        with pytest.raises(
            CatalogError, match="--platform vm: gpufabric renders VM requests for aws and gcp"
        ):
            plan(request)
        return
    result = plan(request)
    checked = validate_plan(result)
    if platform in (Platform.VM, Platform.KUBERNETES):
        assert checked >= 1, f"{instance}/{platform}: nothing validated"
    assert result.env == {k: v for k, v in result.env.items()}  # redacted copy, plain dict
    limit = skypilot_vm_limit(result.instance) if result.instance else None
    if platform is Platform.SKYPILOT and limit is not None:
        # SkyPilot would refuse (GCP) or silently drop (AWS) the fabric: standard tier, said in one line,
        # with the VM plan's steps as manual ones.
        assert result.tier_planned is Tier.STANDARD and limit in result.warnings
        assert result.documents["skypilot.task"]["resources"]["network_tier"] == "standard"
        assert any(p.startswith("manual, as `--platform ") for p in result.prerequisites)
    elif result.instance and result.instance.has_fabric:
        assert result.tier_planned is Tier.BEST and result.fabric is result.instance.fabric
        assert result.env != result.fabric_off_env


def test_validator_really_rejects_bad_bodies() -> None:
    with pytest.raises(jsonschema.ValidationError):
        validate_skypilot_task({"resources": {"network_tier": "fastest"}, "num_nodes": 2})
    with pytest.raises(AssertionError, match="SkyPilot raises at launch"):
        validate_skypilot_task(
            {"resources": {"network_tier": "best", "infra": "gcp", "instance_type": "a3-megagpu-8g"}}
        )
    with pytest.raises(AssertionError, match="Unknown parameter"):
        validate_ec2("RunInstances", {"ImageId": "x", "MinCount": 1, "MaxCount": 1, "Bogus": 1})
    with pytest.raises(Exception, match="no field named"):
        compute_v1.Network.from_json(json.dumps({"name": "x", "mtuu": 8244}))
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "x"},
                "spec": {"containers": [{"name": "m", "image": "i", "securityContext": {"privilegd": True}}]},
            },
            K8S_VERSION,
            strict=True,
        )
