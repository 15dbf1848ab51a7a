"""A plan as the files a user pastes or applies: one document per file, each in its tool's own format.

``task.sky.yaml`` (``sky launch``), ``pods.k8s.yaml`` or ``job.k8s.yaml`` + ``service.k8s.yaml``
(``kubectl apply -f``; ``configmap.k8s.yaml`` first where the pods mount one), ``pod_config.yaml``
(a fragment for SkyPilot's ``kubernetes.pod_config``),
``job.sbatch`` (``sbatch``), ``ec2-<Operation>.json`` (``aws ec2 <operation> --cli-input-json``),
``gce-<collection>.json``, ``docker-run.sh``, ``env.sh`` (``source``) and ``plan.json`` (everything, with
the privileges, prerequisites and warnings). ``export_files`` is pure (names and texts);
``write_plan_files`` writes them under a directory.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import yaml

from gpufabric.errors import InputError, UsageError
from gpufabric.outputs import is_symlink_loop, write_files
from gpufabric.planner.model import Plan

EXECUTABLE_SUFFIXES = (".sh", ".sbatch")
"""The exported files a user runs (scripts, sbatch files): written with mode 0755."""

# --format KIND -> what it prints alone.
EXPORT_KINDS = ("sky", "k8s", "sbatch", "env", "json")


def _yaml(doc: Any) -> str:
    return yaml.safe_dump(doc, sort_keys=False, default_flow_style=False, width=1000)


def _yaml_documents(docs: list[Any]) -> str:
    return "---\n".join(_yaml(d) for d in docs)


def _kebab(operation: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "-", operation).lower()


def k8s_documents(result: Plan) -> list[dict[str, Any]]:
    """The applyable Kubernetes objects: Pods, or the Indexed Job and its headless Service."""
    docs = result.documents
    first = [docs["kubernetes.configmap"]] if "kubernetes.configmap" in docs else []  # the pods mount it
    if "kubernetes.pods" in docs:
        return first + list(docs["kubernetes.pods"])
    return first + [docs[k] for k in ("kubernetes.job", "kubernetes.service") if k in docs]


def _shell_word(value: str, parameters: dict[str, str]) -> str:
    """``value`` as one shell word: quoted as it is, except a plan parameter (``${IMAGE}``), which must
    expand from the user's environment (single quotes would pass the text ``${IMAGE}`` to docker) and
    stops the script with its description when unset."""
    match = re.fullmatch(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}", value)
    if match is None or match.group(1) not in parameters:
        return shlex.quote(value)
    name = match.group(1)
    hint = re.sub(r"[^A-Za-z0-9 ,.()/_-]", "", parameters[name])  # literal text inside "${X:?...}"
    return f'"${{{name}:?export {name}=... first: {hint}}}"'


def _docker_script(result: Plan) -> str:
    run = result.documents["docker.run"]
    lines = [
        "#!/bin/bash",
        "# source env.sh first: each --env=NAME passes that variable from this shell into the container",
        "set -euo pipefail",
        "exec docker run --rm "
        + " ".join(shlex.quote(o) for o in run["options"])
        + f' {_shell_word(run["image"], result.parameters)} "$@"',
    ]
    return "\n".join(lines) + "\n"


def export_files(result: Plan) -> dict[str, str]:
    """File name -> content of every document of ``result``, plus ``env.sh`` and ``plan.json``."""
    docs = result.documents
    out: dict[str, str] = {}
    if "skypilot.task" in docs:
        out["task.sky.yaml"] = _yaml(docs["skypilot.task"])
    if "kubernetes.pods" in docs:
        out["pods.k8s.yaml"] = _yaml_documents(docs["kubernetes.pods"])
    for key in ("kubernetes.configmap", "kubernetes.job", "kubernetes.service"):
        if key in docs:
            out[f"{key.split('.')[1]}.k8s.yaml"] = _yaml(docs[key])
    if "kubernetes.pod_config" in docs:
        out["pod_config.yaml"] = _yaml(docs["kubernetes.pod_config"])
    if "slurm.sbatch" in docs:
        out["job.sbatch"] = docs["slurm.sbatch"]["script"]
    for key, body in docs.items():
        if key.startswith("ec2."):
            out[f"ec2-{_kebab(key.removeprefix('ec2.'))}.json"] = json.dumps(body, indent=2) + "\n"
        elif key.startswith("compute."):
            out[f"gce-{_kebab(key.removeprefix('compute.'))}.json"] = json.dumps(body, indent=2) + "\n"
    if "docker.run" in docs:
        out["docker-run.sh"] = _docker_script(result)
    out["env.sh"] = "\n".join(result.env_lines()) + "\n"
    out["plan.json"] = plan_json(result)
    return out


def write_plan_files(out: Path, result: Plan) -> list[str]:
    """Every file of ``export_files(result)`` under the directory ``out`` (made if missing; scripts
    executable), as ``plan --out DIR`` writes them; the names written, in order.

    One-line ``UsageError`` when ``out`` is a file, ``InputError`` when it cannot be written."""
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out}: not a directory; give a directory for the plan's files")
    if is_symlink_loop(out):
        raise UsageError(f"--out {out}: a symbolic link loop; remove the link or give another directory")
    contents = export_files(result)
    try:
        write_files(out, contents, executable=EXECUTABLE_SUFFIXES)
    except OSError as exc:
        raise InputError(f"--out {out}: cannot write: {exc.strerror}") from exc
    return list(contents)


def plan_json(result: Plan) -> str:
    """The whole plan as JSON, its sources named as users know them (public guides, not file names)."""
    from gpufabric.catalog import public_data

    data = public_data(result.model_dump(mode="json", exclude={"request"}))
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def export_kind(result: Plan, kind: str, *, fabric_off: bool = False) -> str:
    """The text of one kind of document alone; a plan without it raises ValueError naming the fix."""
    docs = result.documents
    if kind == "env":
        return "\n".join(result.env_lines(fabric_off=fabric_off)) + "\n"
    if kind == "json":
        return plan_json(result)
    platform = {"sky": "skypilot", "k8s": "kubernetes", "sbatch": "slurm"}[kind]
    if kind == "sky" and "skypilot.task" in docs:
        return _yaml(docs["skypilot.task"])
    if kind == "k8s" and k8s_documents(result):
        return _yaml_documents(k8s_documents(result))
    if kind == "sbatch" and "slurm.sbatch" in docs:
        return str(docs["slurm.sbatch"]["script"])
    raise ValueError(
        f"--format {kind}: this plan is for --platform {result.platform.value}, which has no {kind} "
        f"document; use --platform {platform}, or --out DIR to write every document of this plan"
    )
