"""Least privilege for every container a plan creates, each grant listed in ``Plan.privileges`` with its why.

A container drops ALL Linux capabilities, cannot escalate, and gets back only the capabilities its fabric
needs; a host path is mounted read-only unless the fabric's daemon writes there. Privileged containers
exist only where no device plugin can hand the container its NICs (OCI bare-metal RDMA), and say so.
"""

from __future__ import annotations

from typing import Any

from gpufabric.planner.model import Plan, Privilege


def least_privilege(plan: Plan, where: str, capabilities: dict[str, str]) -> dict[str, Any]:
    """A securityContext dropping ALL and adding ``capabilities`` (name -> why), each listed in the plan."""
    for name, why in capabilities.items():
        plan.privileges.append(Privilege(where=where, grant=f"capability {name}", why=why))
    context: dict[str, Any] = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}
    if capabilities:
        context["capabilities"]["add"] = list(capabilities)
    return context


def host_volume(
    plan: Plan, where: str, name: str, path: str, mount: str, *, read_only: bool, why: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(hostPath volume, volumeMount) for ``where``, listed in the plan with its access and reason."""
    access = "read-only" if read_only else "read-write"
    plan.privileges.append(Privilege(where=where, grant=f"hostPath {path} at {mount} ({access})", why=why))
    volume_mount: dict[str, Any] = {"name": name, "mountPath": mount}
    if read_only:
        volume_mount["readOnly"] = True
    return {"name": name, "hostPath": {"path": path}}, volume_mount
