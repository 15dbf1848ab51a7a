"""Golden test: what NCCL really gets in a SkyPilot pod on GKE, computed with SkyPilot's own merge.

SkyPilot 0.14.1's GKE template puts its GPUDirect env in the pod (``k8s_gpudirect.json``) and merges the
task's ``pod_config`` into it with ``merge_k8s_configs`` (``sky/utils/config_utils.py``, vendored verbatim
as ``config_utils.py.txt``): env entries merge by name, so SkyPilot's values survive unless ours name them.
NCCL then reads NCCL_ALGO with ``parseList`` (NVIDIA/nccl ``src/graph/tuning.cc``, vendored).
"""

from __future__ import annotations

import ast
import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest

from gpufabric.catalog import FabricName
from gpufabric.planner import PlanRequest, Platform, plan
from gpufabric.planner.skypilot_limits import NCCL_ALGO_UNRESTRICTED, SKYPILOT_GKE_NCCL_ALGO

REFS = Path(__file__).parents[1] / "fixtures" / "references"
NCCL_ALGORITHMS = ("Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT")
GKE = {
    "a3-highgpu-8g": FabricName.GPUDIRECT_TCPX,
    "a3-megagpu-8g": FabricName.GPUDIRECT_TCPXO,
    "a3-ultragpu-8g": FabricName.GPUDIRECT_RDMA,
}


def _skypilot_merge() -> Any:
    """``merge_k8s_configs`` and the helpers it calls, taken from SkyPilot's own source (no sky import)."""
    source = (REFS / "skypilot" / "config_utils.py.txt").read_text()
    wanted = {"_PATCH_MERGE_KEYS", "_check_allowed_and_disallowed_override_keys", "_validate_mergeable_types"}
    wanted.add("merge_k8s_configs")
    nodes = [
        node
        for node in ast.parse(source).body
        if (isinstance(node, ast.FunctionDef) and node.name in wanted)
        or (isinstance(node, ast.Assign) and any(getattr(t, "id", "") in wanted for t in node.targets))
    ]
    namespace: dict[str, Any] = {"Any": Any, "Dict": dict, "List": list, "Optional": Any, "Tuple": tuple}
    exec(compile(ast.Module(body=nodes, type_ignores=[]), "config_utils.py", "exec"), namespace)
    return namespace["merge_k8s_configs"]


def _nccl_algorithms(value: str | None) -> set[str]:
    """The algorithms NCCL enables for NCCL_ALGO=value (one list for all functions), per parseList."""
    if value is None:
        return set(NCCL_ALGORITHMS)
    exclude = value.startswith("^")
    named = {n.lower() for n in value.removeprefix("^").split(",") if n}
    return {a for a in NCCL_ALGORITHMS if (a.lower() in named) != exclude}


def test_nccls_parselist_is_what_the_helper_mirrors() -> None:
    code = (REFS / "nccl" / "tuning.cc").read_text()
    parse = code[code.index("ncclResult_t parseList(") :]
    parse = parse[: parse.index("\nexit:")]
    assert "if (elemList[0] == '^') {\n      unset = 1;\n      set = 0;" in parse
    assert re.search(r"for \(int e = 0; e < nelems; e\+\+\) list\[p \* nelems \+ e\] = unset;", parse)
    assert 'ncclGetEnv("NCCL_ALGO")' in code and _nccl_algorithms(NCCL_ALGO_UNRESTRICTED) == set(
        NCCL_ALGORITHMS
    )


def test_our_copy_of_skypilots_nccl_algo_is_its_templates() -> None:
    env = json.loads((REFS / "skypilot" / "k8s_gpudirect.json").read_text())["env"]
    theirs = {FabricName(name): block["NCCL_ALGO"] for name, block in env.items() if "NCCL_ALGO" in block}
    assert theirs == SKYPILOT_GKE_NCCL_ALGO


@pytest.mark.parametrize("machine", GKE)
def test_the_merged_skypilot_pod_lets_nccl_use_what_the_plan_enables(machine: str) -> None:
    labels = {
        "node.kubernetes.io/instance-type": machine,
        "cloud.google.com/machine-family": "a3",
        "cloud.google.com/gke-accelerator": "nvidia-h100-80gb",
    }
    result = plan(PlanRequest(node_labels=labels, platform=Platform.SKYPILOT))
    assert result.fabric is GKE[machine]
    skypilot_env = json.loads((REFS / "skypilot" / "k8s_gpudirect.json").read_text())["env"][
        GKE[machine].value
    ]
    base = {
        "spec": {
            "containers": [
                {"name": "ray-node", "env": [{"name": k, "value": v} for k, v in skypilot_env.items()]}
            ]
        }
    }
    merged = copy.deepcopy(base)
    _skypilot_merge()(
        merged, copy.deepcopy(result.documents["skypilot.task"]["config"]["kubernetes"]["pod_config"])
    )
    env = {e["name"]: e["value"] for e in merged["spec"]["containers"][0]["env"]}
    enabled = _nccl_algorithms(env.get("NCCL_ALGO"))
    if result.env.get("NCCL_NVLS_ENABLE") == "1":  # TCPXO: Google's newest release turns NVLS on
        assert {"NVLS", "NVLSTree"} <= enabled, env.get("NCCL_ALGO")
        assert env["NCCL_NVLSTREE_MAX_CHUNKSIZE"] == result.env["NCCL_NVLSTREE_MAX_CHUNKSIZE"]
    if "NCCL_ALGO" in result.env:  # the plan's own choice reaches NCCL, whatever SkyPilot's template said
        assert env["NCCL_ALGO"] == result.env["NCCL_ALGO"]
    for name, value in result.env.items():
        assert env.get(name) == value, name  # every planned variable survives SkyPilot's merge


def test_googles_tcpxo_references_leave_nccl_algo_to_nccl() -> None:
    """Google's TCPXO release notes and cluster-toolkit's A3 Mega set NVLSTree's chunk, not NCCL_ALGO."""
    readme = (REFS / "google" / "gpudirect-tcpxo" / "README.md").read_text()
    assert "we recommend that `NCCL_ALGO` remains unset" in readme
    toolkit = (REFS / "google" / "cluster-toolkit" / "a3-megagpu-8g-nemo.Dockerfile").read_text()
    image_env = dict(re.findall(r"^ENV (NCCL_\w+)=(\S+)", toolkit, flags=re.M))
    ours = plan(PlanRequest(instance_type="a3-megagpu-8g", platform=Platform.KUBERNETES)).env
    assert "NCCL_ALGO" not in image_env and "NCCL_ALGO" not in ours
    assert image_env["NCCL_NVLSTREE_MAX_CHUNKSIZE"] == ours["NCCL_NVLSTREE_MAX_CHUNKSIZE"]
