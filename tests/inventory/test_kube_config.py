"""Kube configs that cannot be used: one line on stderr naming the problem and the fix, never log noise.

These run the real console entry point in a subprocess: the kubernetes client reports exec plugin
failures through the root logger, which pytest would capture in-process, hiding the noise a user sees.
Credential plugins are real executables on disk; the API server is kube_api.py's recorded endpoint.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml
from kube_api import RecordedNodesApi

INVENTORY_FIXTURES = Path(__file__).parents[1] / "fixtures" / "inventory"


def gpufabric(*args: str, path_dirs: list[Path] | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.pop("KUBECONFIG", None)
    if path_dirs:
        env["PATH"] = os.pathsep.join([*map(str, path_dirs), env.get("PATH", "")])
    return subprocess.run(
        [sys.executable, "-m", "gpufabric.cli", *args], capture_output=True, text=True, env=env, check=False
    )


def write_config(path: Path, server: str, user: dict[str, Any], **top: Any) -> Path:
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": {"server": server}}],
        "users": [{"name": "u", "user": user}],
        "contexts": [
            {"name": "eks-prod", "context": {"cluster": "c", "user": "u"}},
            {"name": "eks-dev", "context": {"cluster": "c", "user": "u"}},
        ],
        "current-context": "eks-prod",
        **top,
    }
    path.write_text(yaml.safe_dump(doc))
    return path


def exec_user(command: str, **extra: Any) -> dict[str, Any]:
    return {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1beta1",
            "command": command,
            "args": ["eks", "get-token", "--cluster-name", "prod"],
            **extra,
        }
    }


def plugin(folder: Path, name: str, script: str) -> Path:
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def assert_one_line(out: subprocess.CompletedProcess[str], code: int, *parts: str) -> None:
    assert out.returncode == code, out.stderr
    assert out.stderr.count("\n") == 1 and out.stderr.startswith("Error: "), out.stderr
    for part in parts:
        assert part in out.stderr, out.stderr


def test_missing_exec_plugin_is_one_line_naming_it(nodes_api: RecordedNodesApi, tmp_path: Path) -> None:
    config = write_config(tmp_path / "config", nodes_api.url, exec_user("aws-iam-authenticator-absent"))
    out = gpufabric("nodes", "--kubeconfig", str(config))
    assert_one_line(
        out, 2, "context 'eks-prod'", "credential plugin 'aws-iam-authenticator-absent'", "not installed"
    )
    assert nodes_api.requests == []  # refused before any request went out without credentials


def test_missing_exec_plugin_uses_the_entrys_install_hint(
    nodes_api: RecordedNodesApi, tmp_path: Path
) -> None:
    user = exec_user("gke-gcloud-auth-plugin-absent", installHint="Install it with\n  gcloud components")
    config = write_config(tmp_path / "config", nodes_api.url, user)
    out = gpufabric("nodes", "--kubeconfig", str(config))
    assert_one_line(out, 2, "not installed or not on PATH; Install it with gcloud components")


def test_failing_exec_plugin_reports_its_message(nodes_api: RecordedNodesApi, tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    plugin(bin_dir, "aws", 'echo "Error: the SSO session has expired; run aws sso login" >&2\nexit 255\n')
    config = write_config(tmp_path / "config", nodes_api.url, exec_user("aws"))
    out = gpufabric("nodes", "--kubeconfig", str(config), path_dirs=[bin_dir])
    assert_one_line(out, 2, "getting credentials failed", "the SSO session has expired; run aws sso login")


def test_working_exec_plugin_token_reaches_the_server(nodes_api: RecordedNodesApi, tmp_path: Path) -> None:
    credential = {
        "apiVersion": "client.authentication.k8s.io/v1beta1",
        "kind": "ExecCredential",
        "status": {"token": "from-the-plugin"},
    }
    bin_dir = tmp_path / "bin"
    plugin(bin_dir, "aws", f"echo '{json.dumps(credential)}'\n")
    nodes_api.serve_file(INVENTORY_FIXTURES / "eks_mixed.json")
    config = write_config(tmp_path / "config", nodes_api.url, exec_user("aws"))
    out = gpufabric("nodes", "--kubeconfig", str(config), "--format", "json", path_dirs=[bin_dir])
    assert out.returncode == 0, out.stderr
    assert out.stderr == ""
    assert nodes_api.requests[0]["headers"]["authorization"] == "Bearer from-the-plugin"


def test_contexts_but_none_current(nodes_api: RecordedNodesApi, tmp_path: Path) -> None:
    config = write_config(tmp_path / "config", nodes_api.url, {"token": "t"}, **{"current-context": ""})
    out = gpufabric("nodes", "--kubeconfig", str(config))
    assert_one_line(
        out, 2, "has contexts (eks-prod, eks-dev) but none is current", "--context eks-prod", "use-context"
    )


def test_current_context_that_is_not_defined(nodes_api: RecordedNodesApi, tmp_path: Path) -> None:
    config = write_config(tmp_path / "config", nodes_api.url, {"token": "t"}, **{"current-context": "old"})
    out = gpufabric("nodes", "--kubeconfig", str(config))
    assert_one_line(out, 2, "current context 'old' is not defined in it (contexts: eks-prod, eks-dev)")


def test_config_without_contexts(nodes_api: RecordedNodesApi, tmp_path: Path) -> None:
    config = write_config(tmp_path / "config", nodes_api.url, {"token": "t"}, contexts=[])
    for extra in ([], ["--context", "eks-prod"]):
        out = gpufabric("nodes", "--kubeconfig", str(config), *extra)
        assert_one_line(out, 2, "defines no contexts; add one with aws eks update-kubeconfig")


def test_unreachable_server_is_one_line_without_retry_warnings(tmp_path: Path) -> None:
    config = write_config(tmp_path / "config", "http://127.0.0.1:9", {"token": "t"})
    out = gpufabric("nodes", "--kubeconfig", str(config))
    assert_one_line(out, 1, "cannot reach the Kubernetes API server at http://127.0.0.1:9")
