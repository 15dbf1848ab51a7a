"""What certify changes in a scheduler, printed always and executed only with ``--apply``.

- Slurm: ``scontrol update nodename=NODE state=drain reason="..."`` for a failed node (the first reason,
  as ``sinfo -R`` shows it), ``scontrol update nodename=NODE state=resume`` for a passed one. A degraded
  node is left as it is.
- Kubernetes, through the official client: every certified node gets the labels ``gpufabric.io/certify``
  (pass / degraded / fail) and ``gpufabric.io/certified-until``; a failed node gets the ``NoSchedule``
  taint ``gpufabric.io/certify=fail``, a passed one loses it. The request is a patch of the Node's labels
  and of its whole taint list (a list the API server replaces, so the node's other taints are read
  first and kept); each request's Node is checked against the Kubernetes OpenAPI schema
  (kubernetes-validate, strict) before anything is sent.
Actions need the scheduler's own node names: with ``--nodes N`` (node0000 ...) there are none.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from typing import Any

from gpufabric.analysis.certify import Action, NodeCertificate, NodeStatus

LABEL = "gpufabric.io/certify"
UNTIL_LABEL = "gpufabric.io/certified-until"
TAINT_KEY = "gpufabric.io/certify"
REASON_CHARS = 120


def drain_reason(certificate: NodeCertificate) -> str:
    """``gpufabric certify: <first reason>``, short enough for ``sinfo -R``'s column."""
    first = certificate.reasons[0].text if certificate.reasons else certificate.status.value
    text = f"gpufabric certify: {first}".replace('"', "'")
    return text if len(text) <= REASON_CHARS else text[: REASON_CHARS - 3] + "..."


def slurm_actions(certificates: Mapping[str, NodeCertificate], scontrol: str = "scontrol") -> list[Action]:
    actions = []
    for node, cert in certificates.items():
        if cert.status is NodeStatus.FAIL:
            argv = [scontrol, "update", f"nodename={node}", "state=drain", f"reason={drain_reason(cert)}"]
            actions.append(Action(target="slurm", node=node, what="drain", command=argv))
        elif cert.status is NodeStatus.PASS:
            argv = [scontrol, "update", f"nodename={node}", "state=resume"]
            actions.append(Action(target="slurm", node=node, what="resume", command=argv))
    return actions


def _label_value(text: str) -> str:
    """An ISO time as a label value (letters, digits, '-', '_', '.'; 63 at most)."""
    return text.replace(":", "-").replace("+", "_")[:63]


def node_patch(cert: NodeCertificate, taints: list[dict[str, Any]]) -> dict[str, Any]:
    """The Node patch of ``cert``: labels, and the taint list with ours set or removed."""
    kept = [t for t in taints if t.get("key") != TAINT_KEY]
    if cert.status is NodeStatus.FAIL:
        kept.append({"key": TAINT_KEY, "value": "fail", "effect": "NoSchedule"})
    labels = {LABEL: cert.status.value, UNTIL_LABEL: _label_value(cert.expires)}
    return {"metadata": {"labels": labels}, "spec": {"taints": kept}}


def kubernetes_actions(certificates: Mapping[str, NodeCertificate]) -> list[Action]:
    """One patch per node, as it would be sent to a node without other taints (``apply`` re-reads them)."""
    actions = []
    for node, cert in certificates.items():
        what = "label+taint" if cert.status is NodeStatus.FAIL else "label+untaint"
        actions.append(Action(target="kubernetes", node=node, what=what, request=node_patch(cert, [])))
    return actions


def validate_patch(node: str, patch: Mapping[str, Any]) -> None:
    """The patched fields as a Node manifest, checked against the OpenAPI schema (one line if not)."""
    from gpufabric.launch.kubernetes import validate_manifests

    metadata = {"name": node, **dict(patch.get("metadata", {}))}
    validate_manifests(
        [{"apiVersion": "v1", "kind": "Node", "metadata": metadata, "spec": patch.get("spec", {})}]
    )


def apply_slurm(actions: list[Action], environ: Mapping[str, str]) -> list[Action]:
    done = []
    for action in actions:
        try:
            out = subprocess.run(
                action.command, capture_output=True, text=True, timeout=60, check=False, env=dict(environ)
            )
            ok = out.returncode == 0
            outcome = (
                "done"
                if ok
                else f"scontrol exit {out.returncode}: {(out.stderr or out.stdout).strip()[:200]}"
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            ok, outcome = False, f"scontrol could not run: {exc}"
        done.append(action.model_copy(update={"applied": ok, "outcome": outcome}))
    return done


def apply_kubernetes(
    actions: list[Action], certificates: Mapping[str, NodeCertificate], api: Any
) -> list[Action]:
    """Read each node's taints, patch labels and taints through ``api`` (a ``CoreV1Api``)."""
    done = []
    for action in actions:
        try:
            current = api.read_node(action.node)
            taints = [t.to_dict() for t in (current.spec.taints or [])] if current.spec else []
            taints = [{k: v for k, v in t.items() if v is not None} for t in taints]
            patch = node_patch(certificates[action.node], taints)
            validate_patch(action.node, patch)
            # A dict is a strategic merge patch: say so (a client may otherwise pick JSON Patch, a list).
            api.patch_node(action.node, patch, _content_type="application/strategic-merge-patch+json")
            done.append(action.model_copy(update={"request": patch, "applied": True, "outcome": "done"}))
        except Exception as exc:  # the client raises ApiException, urllib3 errors ...: one line each
            line = " ".join(str(exc).split())[:200]
            done.append(action.model_copy(update={"applied": False, "outcome": f"not applied: {line}"}))
    return done


def plan_actions(
    target: str, certificates: Mapping[str, NodeCertificate], *, numbered: bool
) -> tuple[list[Action], list[str]]:
    """(actions, notes) for ``target``; schema-checked before they are printed."""
    if target == "none":
        return [], []
    if numbered:
        return [], [
            f"actions: {target}: none, the nodes are numbered (--nodes); name them (--node-list, --hostfile)"
        ]
    if target == "slurm":
        return slurm_actions(certificates), []
    actions = kubernetes_actions(certificates)
    for action in actions:
        validate_patch(action.node, action.request or {})
    return actions, []
