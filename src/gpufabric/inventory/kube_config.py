"""The kube config as kubectl reads it: files, contexts, the current one, and exec credential plugins.

Read here, before the official client loads it, so that each way it can be unusable is one line with
the fix: no file, no contexts, none current, a current context that is not defined, an unknown
``--context``, or an exec credential plugin (aws, gke-gcloud-auth-plugin ...) that is not installed -
which the client would only log before failing at the first request with an unrelated error.
"""

from __future__ import annotations

import difflib
import logging
import os
import shutil
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from gpufabric.errors import InputError, UsageError
from gpufabric.textfile import read_text_file
from gpufabric.yaml_input import load_yaml

DEFAULT_KUBECONFIG = "~/.kube/config"
GET_CREDENTIALS = (
    "aws eks update-kubeconfig --name CLUSTER, gcloud container clusters get-credentials CLUSTER, "
    "or your provider's equivalent"
)

# What to install when a kube config's exec credential plugin is missing and the entry gives no installHint.
PLUGIN_INSTALL = {
    "aws": "install the AWS CLI v2 (https://docs.aws.amazon.com/cli/latest/userguide/getting-started-install.html)",
    "aws-iam-authenticator": "install aws-iam-authenticator, or recreate the entry with "
    "`aws eks update-kubeconfig --name CLUSTER` (uses the AWS CLI)",
    "gke-gcloud-auth-plugin": "run `gcloud components install gke-gcloud-auth-plugin`",
    "kubelogin": "run `az aks install-cli`",
}


def config_paths(kubeconfig: str | None, environ: Mapping[str, str]) -> str:
    return kubeconfig or environ.get("KUBECONFIG") or DEFAULT_KUBECONFIG


def existing_files(paths: str) -> list[Path]:
    return [Path(p).expanduser() for p in paths.split(os.pathsep) if p and Path(p).expanduser().is_file()]


@dataclass
class KubeConfig:
    """What we read of the merged kube config files before handing them to the client."""

    contexts: list[str] = field(default_factory=list)
    current: str | None = None
    context_user: dict[str, str] = field(default_factory=dict)
    user_exec: dict[str, dict[str, Any]] = field(default_factory=dict)


def read_config(files: list[Path]) -> KubeConfig:
    """Contexts, the current one, and exec plugins, merged the way kubectl merges $KUBECONFIG (first wins)."""
    merged = KubeConfig()
    for path in files:
        try:
            doc = load_yaml(read_text_file(path, "kube config"))  # safe_load, duplicate keys refused
        except yaml.YAMLError as exc:
            raise InputError(f"kube config {path} is not valid YAML: {' '.join(str(exc).split())}") from exc
        if not isinstance(doc, dict):
            raise InputError(f"kube config {path} is not a kube config (expected a mapping with 'contexts')")
        for entry in doc.get("contexts") or []:
            if isinstance(entry, dict) and entry.get("name") and entry["name"] not in merged.contexts:
                name = str(entry["name"])
                merged.contexts.append(name)
                context = entry.get("context")
                if isinstance(context, dict) and context.get("user"):
                    merged.context_user[name] = str(context["user"])
        for entry in doc.get("users") or []:
            if isinstance(entry, dict) and entry.get("name") and isinstance(entry.get("user"), dict):
                plugin = entry["user"].get("exec")
                if isinstance(plugin, dict):
                    merged.user_exec.setdefault(str(entry["name"]), plugin)
        if merged.current is None and doc.get("current-context"):
            merged.current = str(doc["current-context"])
    return merged


def choose_context(kube: KubeConfig, context: str | None, where: str) -> str:
    """The context to use, or one line saying why there is none and how to pick one."""
    names = kube.contexts
    if not names:
        raise UsageError(f"kube config {where} defines no contexts; add one with {GET_CREDENTIALS}")
    listing = ", ".join(names)
    if context is not None:
        if context not in names:
            close = difflib.get_close_matches(context, names, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise UsageError(
                f"--context {context!r} is not in kube config {where}; {hint}valid contexts: {listing}"
            )
        return context
    if kube.current is None:
        raise UsageError(
            f"kube config {where} has contexts ({listing}) but none is current; pass --context "
            f"{names[0]}, or make one current with `kubectl config use-context {names[0]}`"
        )
    if kube.current not in names:
        raise UsageError(
            f"kube config {where}: its current context {kube.current!r} is not defined in it (contexts: "
            f"{listing}); pass --context {names[0]}, or `kubectl config use-context {names[0]}`"
        )
    return kube.current


def check_exec_plugin(kube: KubeConfig, chosen: str, where: str, environ: Mapping[str, str]) -> None:
    """A missing credential plugin is one line naming it and its install, not a login that fails later.

    The client would log the FileNotFoundError, carry on without credentials and fail at the first
    request with an unrelated connection or 401 error.
    """
    user = kube.context_user.get(chosen)
    plugin = kube.user_exec.get(user) if user else None
    command = str(plugin.get("command") or "") if plugin else ""
    if not command or ("/" in command and not Path(command).is_absolute()):
        return  # relative paths resolve against the kube config's folder: left to the client
    if shutil.which(command, path=environ.get("PATH")):
        return
    assert plugin is not None
    hint = " ".join(str(plugin.get("installHint") or "").split()) or PLUGIN_INSTALL.get(
        Path(command).name, f"install it, or recreate the entry with {GET_CREDENTIALS}"
    )
    raise UsageError(
        f"kube config {where}, context {chosen!r}: its credential plugin {command!r} (users[{user}].exec) "
        f"is not installed or not on PATH; {hint}"
    )


@contextmanager
def client_errors() -> Iterator[list[str]]:
    """Messages the kubernetes client logs at ERROR while loading a config (it logs plugin failures
    instead of raising them); collected here so that they become one error line, not stray output."""
    messages: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            messages.append(" ".join(record.getMessage().split()))

    handler = Collect(level=logging.ERROR)
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield messages
    finally:
        root.removeHandler(handler)
