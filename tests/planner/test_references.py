"""Golden tests: plans against the references themselves, field by field (env, annotations, volumes, images,
capabilities, resources). Google's GPUDirect manifests, AWS's EKS EFA example and SkyPilot 0.14.1's code
are vendored under tests/fixtures/references/ (README there: sources, commits, regeneration).

A difference is a failure unless it is in ``DEVIATIONS``, and every deviation has its reason in
docs/planner-references.md (checked below).
"""

from __future__ import annotations

import json
import re
import shlex
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpufabric.planner import Plan, PlanRequest, Platform, plan
from gpufabric.planner.images import EFA_NCCL_TESTS, EFA_TUNER_PLUGIN
from gpufabric.planner.skypilot_limits import AWS_EFA_PREFIXES, CLOUDS_WITHOUT_BEST, GCP_BEST_MACHINE_TYPES

REFS = Path(__file__).parents[1] / "fixtures" / "references"
DOC = Path(__file__).parents[2] / "docs" / "planner-references.md"

# (reference, field) -> why ours differs; the doc repeats each key with its reasoning.
DEVIATIONS = {
    ("google-tcpx", "volume tcpx-socket"): "emptyDir, not hostPath /run/tcpx",
    ("google-tcpx", "env LD_LIBRARY_PATH"): "no ${LD_LIBRARY_PATH} expansion in a pod",
    ("google-tcpx", "env NCCL_GPUDIRECTTCPX_UNIX_CLIENT_PREFIX"): "set in the env, not per script",
    ("google-tcpx", "env NCCL_GPUDIRECTTCPX_FORCE_ACK"): "SkyPilot's",
    ("google-tcpx", "env NCCL_MIN_NCHANNELS"): "SkyPilot's",
    ("google-tcpx", "env NCCL_MAX_NCHANNELS"): "SkyPilot's",
    ("google-tcpx", "env NCCL_GPUDIRECTTCPX_SOCKET_IFNAME"): "from the NIC count",
    ("skypilot-tcpx", "env NCCL_ALGO"): "Google's Ring,Tree",
    ("skypilot-tcpx", "env LD_LIBRARY_PATH"): "Google's",
    ("skypilot-tcpx", "env CUDA_VISIBLE_DEVICES"): "the runtime sets it",
    ("google-tcpxo", "env CUDA_VISIBLE_DEVICES"): "the runtime sets it",
    ("google-tcpxo", "env NCCL_DEBUG"): "the user's choice",
    ("google-tcpxo", "env NCCL_DEBUG_SUBSYS"): "the user's choice",
    ("google-tcpxo", "env NCCL_TUNER_CONFIG_PATH"): "the lib dir inside the container",
    ("google-tcpxo", "env NCCL_SHIMNET_GUEST_CONFIG_CHECKER_CONFIG_FILE"): "the lib dir inside the container",
    ("skypilot-tcpxo", "env NCCL_ALGO"): "Google dropped it; '^' replaces SkyPilot's",
    ("skypilot-tcpxo", "env CUDA_VISIBLE_DEVICES"): "the runtime sets it",
    ("google-rdma", "annotation networking.gke.io/interfaces"): "gvnic-1 on eth1",
    ("google-rdma", "env"): "the gIB env in the pod, not sourced",
    ("aws-eks-efa", "env FI_EFA_FORK_SAFE"): "aws-ofi-nccl sets it itself",
    ("aws-eks-efa", "env LD_LIBRARY_PATH"): "the image's own",
    ("aws-eks-efa", "env PATH"): "the image's own",
    ("aws-eks-efa", "volume shmem"): "emptyDir Memory",
    ("skypilot-sidecar", "image"): "Google's newer pinned tags",
}


def _google(path: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((REFS / "google" / path).read_text()) if d]


def _google_pod(path: str) -> dict[str, Any]:
    return next(d for d in _google(path) if d["kind"] == "Pod")


@cache
def _skypilot(name: str) -> Any:
    return json.loads((REFS / "skypilot" / f"{name}.json").read_text())


def _ours(instance: str) -> tuple[Plan, dict[str, Any]]:
    result = plan(PlanRequest(instance_type=instance, platform=Platform.KUBERNETES, nodes=2))
    return result, result.documents["kubernetes.pods"][0]


def _container(pod: dict[str, Any], name: str) -> dict[str, Any]:
    return next(c for c in pod["spec"]["containers"] if c["name"] == name)


def _env(container: dict[str, Any]) -> dict[str, str]:
    return {e["name"]: e["value"] for e in container.get("env", [])}


def _host_paths(pod: dict[str, Any]) -> dict[str, str]:
    return {v["name"]: v["hostPath"]["path"] for v in pod["spec"]["volumes"] if "hostPath" in v}


def _mounts(container: dict[str, Any], pod: dict[str, Any]) -> dict[str, str]:
    """mountPath -> what is mounted (a host path, or the volume kind)."""
    volumes = {v["name"]: v for v in pod["spec"]["volumes"]}
    out = {}
    for mount in container.get("volumeMounts", []):
        volume = volumes[mount["name"]]
        out[mount["mountPath"]] = volume["hostPath"]["path"] if "hostPath" in volume else "emptyDir"
    return out


def _compare_env(ours: dict[str, str], theirs: dict[str, str], reference: str) -> None:
    differences = sorted(k for k, v in theirs.items() if ours.get(k) != v)
    unexplained = [k for k in differences if (reference, f"env {k}") not in DEVIATIONS]
    assert not unexplained, {k: (ours.get(k), theirs[k]) for k in unexplained}


def _run_nccl_env() -> dict[str, str]:
    """The ``-x NAME=VALUE`` pairs of Google's TCPX run-nccl.sh (gpudirect-tcpx/nccl-config.yaml)."""
    script = next(d for d in _google("gpudirect-tcpx/nccl-config.yaml"))["data"]["run-nccl.sh"]
    pairs = re.findall(r"-x (\w+)=(\S+)", script)
    return {name: shlex.split(value)[0] for name, value in pairs}


def _tcpxo_release_env() -> dict[str, str]:
    """The NCCL configs of the newest release in Google's gpudirect-tcpxo/README.md."""
    readme = (REFS / "google" / "gpudirect-tcpxo" / "README.md").read_text()
    newest = readme[readme.index("#### NCCL configs:\n```", readme.index("## Releases\n- [") + 1) :]
    block = newest[: newest.index("```", newest.index("```") + 3)]
    return dict(re.findall(r'"(\w+)=([^"]*)"', block))


def test_gke_tcpx_matches_googles_manifest_and_run_script() -> None:
    result, pod = _ours("a3-highgpu-8g")
    google = _google_pod("gpudirect-tcpx/nccl-test-latest.yaml")
    annotations = pod["metadata"]["annotations"]
    for key, value in google["metadata"]["annotations"].items():
        if key == "networking.gke.io/interfaces":
            assert json.loads(annotations[key]) == json.loads(value)
        else:
            assert annotations[key].split() == value.split(), key
    ours_daemon, theirs_daemon = _container(pod, "tcpx-daemon"), _container(google, "tcpx-daemon")
    assert ours_daemon["image"] == theirs_daemon["image"]
    assert _container(pod, "main")["image"] == _container(google, "nccl-test")["image"]
    assert ours_daemon["command"][:8] == theirs_daemon["command"][:8]
    for ours, theirs in (
        (ours_daemon, theirs_daemon),
        (_container(pod, "main"), _container(google, "nccl-test")),
    ):
        assert (
            ours["securityContext"]["capabilities"]["add"] == theirs["securityContext"]["capabilities"]["add"]
        )
        assert ours["securityContext"]["capabilities"]["drop"] == ["ALL"]
        expected = _mounts(theirs, google)
        got = _mounts(ours, pod)
        for path, source in expected.items():
            if source == "/run/tcpx":  # the RxDM socket: a pod-local emptyDir (DEVIATIONS)
                assert got[path] == "emptyDir"
            elif theirs["name"] == "nccl-test" and path == "/configs":
                continue  # Google's script ConfigMap; the plan runs no script
            else:
                assert got[path] == source, path
    assert ("google-tcpx", "volume tcpx-socket") in DEVIATIONS
    _compare_env({**result.env, **_env(_container(pod, "main"))}, _run_nccl_env(), "google-tcpx")
    assert result.env["NCCL_GPUDIRECTTCPX_PROGRAM_FLOW_STEERING_WAIT_MICROS"] == "500000"
    assert result.env["NCCL_BUFFSIZE"] == "4194304"


def test_gke_tcpx_env_matches_skypilots_template_where_google_is_silent() -> None:
    result, pod = _ours("a3-highgpu-8g")
    _compare_env(
        {**result.env, **_env(_container(pod, "main"))},
        _skypilot("k8s_gpudirect")["env"]["gpudirect-tcpx"],
        "skypilot-tcpx",
    )


def test_gke_tcpxo_matches_googles_manifest_and_newest_release_env() -> None:
    result, pod = _ours("a3-megagpu-8g")
    google = _google_pod("gpudirect-tcpxo/nccl-test-latest.yaml")
    annotations = pod["metadata"]["annotations"]
    for key, value in google["metadata"]["annotations"].items():
        if key == "networking.gke.io/interfaces":
            assert json.loads(annotations[key]) == json.loads(value)
        else:
            assert annotations[key].split() == value.split(), key
    daemon, theirs = _container(pod, "tcpxo-daemon"), _container(google, "tcpxo-daemon")
    assert daemon["image"] == theirs["image"]
    assert (
        daemon["securityContext"]["capabilities"]["add"] == theirs["securityContext"]["capabilities"]["add"]
    )
    assert "privileged" not in json.dumps(pod)
    main = _container(pod, "main")
    assert main["image"] == _container(google, "nccl-test")["image"]
    assert "add" not in main["securityContext"]["capabilities"]  # Google grants the NCCL container nothing
    for ours, reference in ((daemon, theirs), (main, _container(google, "nccl-test"))):
        got = _mounts(ours, pod)
        for path, source in _mounts(reference, google).items():
            assert got.get(path) == source, (ours["name"], path)
    release = _tcpxo_release_env()
    assert len(release) >= 20, "the README's newest NCCL configs were not found"
    _compare_env({**result.env, **_env(main)}, release, "google-tcpxo")
    for name in ("NCCL_TUNER_CONFIG_PATH", "NCCL_SHIMNET_GUEST_CONFIG_CHECKER_CONFIG_FILE"):
        # the README asks to replace /usr/local/tcpxo/lib64 with the lib dir the installer mounts
        assert result.env[name] == release[name].replace("/usr/local/tcpxo/lib64", "/usr/local/nvidia/lib64")
    installer = _google("gpudirect-tcpxo/nccl-tcpxo-installer.yaml")[0]
    plugin_image = installer["spec"]["template"]["spec"]["initContainers"][1]["image"]
    assert main["image"] == plugin_image  # the workload image and the installer are one release


def test_gke_tcpxo_env_against_skypilot() -> None:
    result, pod = _ours("a3-megagpu-8g")
    _compare_env(
        {**result.env, **_env(_container(pod, "main"))},
        _skypilot("k8s_gpudirect")["env"]["gpudirect-tcpxo"],
        "skypilot-tcpxo",
    )


@pytest.mark.parametrize("instance", ["a3-ultragpu-8g", "a4-highgpu-8g"])
def test_gke_rdma_matches_googles_manifest_and_skypilots_env(instance: str) -> None:
    result, pod = _ours(instance)
    google = _google_pod("gpudirect-rdma/nccl-test.yaml")
    theirs = google["spec"]["containers"][0]
    main = _container(pod, "main")
    assert main["image"] == theirs["image"]
    got = _mounts(main, pod)
    for path, source in _mounts(theirs, google).items():
        if source == "emptyDir":
            continue  # /dev/shm: ours has no 250Gi size limit
        assert got[path] == source, path
    assert all(m.get("readOnly") for m in main["volumeMounts"] if m["mountPath"].startswith("/usr/local"))
    interfaces = json.loads(pod["metadata"]["annotations"]["networking.gke.io/interfaces"])
    google_interfaces = json.loads(google["metadata"]["annotations"]["networking.gke.io/interfaces"])
    assert [i for i in interfaces if i["network"] != "gvnic-1"] == google_interfaces
    sky_env = dict(_skypilot("k8s_gpudirect")["env"]["gpudirect-rdma"])
    if instance == "a4-highgpu-8g":
        sky_env["NCCL_TUNER_CONFIG_PATH"] = "/usr/local/gib/configs/tuner_config_a4.txtpb"
    _compare_env({**result.env, **_env(main)}, sky_env, "skypilot-rdma")
    installer = _google("gpudirect-rdma/nccl-rdma-installer.yaml")[0]
    assert (
        theirs["image"].rsplit(":", 1)[1]
        == (installer["spec"]["template"]["spec"]["initContainers"][0]["image"].rsplit(":", 1)[1])
    )


def test_eks_efa_matches_aws_example() -> None:
    _, pod = _ours("p5.48xlarge")
    job = yaml.safe_load((REFS / "aws" / "nccl-tests.yaml").read_text())
    worker = job["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]
    launcher = job["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]
    main = _container(pod, "main")
    assert main["resources"] == worker["containers"][0]["resources"]  # GPUs, EFA, hugepages, memory
    args = launcher["command"]
    theirs = dict(
        a.split("=", 1) for a, prev in zip(args[1:], args[:-1], strict=True) if prev == "-x" and "=" in a
    )
    theirs.pop("NCCL_DEBUG")  # the user's choice
    env = _env(main)
    differences = sorted(k for k, v in theirs.items() if env.get(k) != v)
    assert differences == ["FI_EFA_FORK_SAFE"], differences
    # aws-ofi-nccl's EFA cheatsheet: FI_EFA_FORK_SAFE "not needed anymore", RDMAV_FORK_SAFE "do not use"
    assert not {"FI_EFA_FORK_SAFE", "RDMAV_FORK_SAFE"} & set(env)
    assert ("aws-eks-efa", "env FI_EFA_FORK_SAFE") in DEVIATIONS
    assert "LD_LIBRARY_PATH" not in env  # the image sets it; a pod env would replace it
    dockerfile = (REFS / "aws" / "nccl-tests.Dockerfile").read_text()
    image_path = re.search(r"^ENV LD_LIBRARY_PATH=(\S+)", dockerfile, flags=re.M)
    assert image_path is not None and str(Path(EFA_TUNER_PLUGIN).parent) in image_path.group(1).split(":")
    assert env["NCCL_TUNER_PLUGIN"] == EFA_TUNER_PLUGIN
    build = yaml.safe_load((REFS / "aws" / "buildspec.yaml").read_text())["env"]["variables"]
    tag = (
        f"cuda{build['CUDA_VERSION']}-efa{build['EFA_INSTALLER_VERSION']}-ofi{build['AWS_OFI_NCCL_VERSION']}"
        f"-nccl{build['NCCL_VERSION']}-tests{build['NCCL_TESTS_VERSION']}"
    )
    assert main["image"] == EFA_NCCL_TESTS.ref == f"public.ecr.aws/hpc-cloud/nccl-tests:{tag}"


def test_skypilot_lists_match_its_code() -> None:
    unsupported = set(_skypilot("resources")["clouds_without_network_tier"]) - {"kubernetes", "nebius"}
    assert {c.value for c in CLOUDS_WITHOUT_BEST} == unsupported & {"aws", "gcp", "azure", "oci", "nebius"}
    assert list(GCP_BEST_MACHINE_TYPES) == _skypilot("gcp")["GPU_DIRECT_TCPX_INSTANCE_TYPES"]
    assert "GPU_DIRECT_TCPX_INSTANCE_TYPES" in _skypilot("gcp")["network_tier_best_check"]
    assert list(AWS_EFA_PREFIXES) == _skypilot("aws")["_EFA_INSTANCE_TYPE_PREFIXES"]


def test_efa_docker_options_are_skypilots() -> None:
    result = plan(PlanRequest(instance_type="p4d.24xlarge", platform=Platform.DOCKER))
    sky = [part for option in _skypilot("aws")["_EFA_DOCKER_RUN_OPTIONS"] for part in option.split()]
    options = result.docker_options
    for i, part in enumerate(sky):
        assert part in options, part
        if part == "--ulimit":
            assert sky[i + 1] in options


def test_tcpx_vm_container_options_cover_skypilots() -> None:
    """SkyPilot's GPU_DIRECT_TCPX_SPECIFIC_OPTIONS (minus its --env, which the plan's env carries)."""
    result = plan(PlanRequest(instance_type="a3-highgpu-8g", platform=Platform.VM))
    ours = {
        o.removesuffix(":ro").replace("--device=", "--device ").replace("--volume=", "--volume ")
        for o in result.docker_options
    }
    ours |= {f"--ulimit {o}" for o in result.docker_options if o.startswith(("memlock", "stack"))}
    for option in _skypilot("gcp")["GPU_DIRECT_TCPX_SPECIFIC_OPTIONS"]:
        if option.startswith("--env"):
            name, value = option.removeprefix("--env ").split("=", 1)
            if name == "NCCL_GPUDIRECTTCPX_PROGRAM_FLOW_STEERING_WAIT_MICROS":
                assert result.env[name] == "500000"  # Google's value, not SkyPilot's VM 50000
            else:
                assert result.env[name] == value.strip('"'), name
            continue
        for part in re.findall(r"--\S+(?: (?!--)\S+)?", option):
            device = re.fullmatch(r"--device (/dev/\S+):\1", part)
            assert (f"--device {device.group(1)}" if device else part) in ours, part


def test_sidecar_capabilities_match_skypilot_and_google() -> None:
    for instance, name in (("a3-highgpu-8g", "tcpx-daemon"), ("a3-megagpu-8g", "tcpxo-daemon")):
        _, pod = _ours(instance)
        sky = _skypilot("k8s_gpudirect")["sidecars"][name]
        daemon = _container(pod, name)
        assert daemon["securityContext"]["capabilities"]["add"] == sky["capabilities"]
        assert not sky["privileged"] and "privileged" not in daemon["securityContext"]
        assert daemon["image"].rsplit(":", 1)[0] == sky["image"].rsplit(":", 1)[0]  # same image, newer tag


def test_every_deviation_is_reasoned_in_the_docs() -> None:
    text = DOC.read_text()
    for reference, field in DEVIATIONS:
        assert f"{reference}" in text and field.split(" ", 1)[-1] in text, (reference, field)
