"""What the user's ``pod_config`` does to the fabric: the plan's top-level facts follow the merged pod.

The merge keeps the user's values (``merge.py``). When those set the fabric's switch variables
differently (``FI_PROVIDER=tcp`` on EFA, ``NCCL_NET=Socket``, a GPUDirect-TCPX library path without the
plugin) or request fewer fabric devices than planned (``vpc.amazonaws.com/efa: 2`` of 4), the plan's
``fabric``, ``nic_count``, ``baseline_variant`` and ``env`` would otherwise still describe the plan we
proposed, not the pod that will run; so they are updated, and a warning says which value did it.
"""

from __future__ import annotations

from typing import Any

from gpufabric.catalog import FabricName, get_fabric
from gpufabric.expect.published import efa_count_figures
from gpufabric.nccl_logs.patterns import network_proof
from gpufabric.planner.model import Plan, Tier

# Variables whose value selects the transport: a different value from the user turns the fabric off.
SWITCH_VARIABLES = ("FI_PROVIDER", "NCCL_NET", "NCCL_IB_HCA")
PATH_VARIABLES = ("LD_LIBRARY_PATH",)


def _main_container(pod_config: dict[str, Any]) -> dict[str, Any]:
    containers = pod_config.get("spec", {}).get("containers") or [{}]
    first = containers[0]
    return first if isinstance(first, dict) else {}


def _literal_env(container: dict[str, Any]) -> dict[str, str]:
    """The container's ``env`` entries that carry a literal value (``valueFrom`` ones are not knowable)."""
    return {
        str(item["name"]): str(item["value"])
        for item in container.get("env") or []
        if isinstance(item, dict) and "name" in item and "value" in item
    }


def _switched_off(plan: Plan, env: dict[str, str]) -> str | None:
    """The user's variable that turns the planned fabric off, as ``NAME=VALUE``; None when it stays on."""
    spec = get_fabric(plan.fabric)
    if env.get("NCCL_NET", "").lower() == "socket":
        return f"NCCL_NET={env['NCCL_NET']}"
    for name, planned in spec.enable_env.items():
        if name not in env or env[name] == planned:
            continue
        if name in SWITCH_VARIABLES:
            return f"{name}={env[name]}"
        if name in PATH_VARIABLES and not set(planned.split(":")) <= set(env[name].split(":")):
            return f"{name}={env[name]}"
    return None


def _requested_devices(container: dict[str, Any], resource: str) -> int | None:
    resources = container.get("resources") or {}
    for kind in ("limits", "requests"):
        value = (resources.get(kind) or {}).get(resource)
        if value is not None:
            try:
                return int(str(value))
            except ValueError:
                return None
    return None


def reconcile_with_pod_config(plan: Plan, pod_config: dict[str, Any]) -> None:
    """Update ``plan``'s fabric facts to what the merged ``pod_config`` really runs, with a warning each."""
    if not plan.request.pod_config or plan.fabric is FabricName.SOCKET:
        return
    main = _main_container(pod_config)
    user_env = _literal_env(_main_container(plan.request.pod_config))
    changed = {k: v for k, v in _literal_env(main).items() if k in user_env and plan.env.get(k) != v}
    plan.env = {**plan.env, **changed}
    fabric = plan.fabric
    resource = plan.instance.k8s_fabric_resource if plan.instance else None
    devices = _requested_devices(main, resource) if resource else None
    switch = _switched_off(plan, changed)
    if switch is None and devices == 0:
        switch = f"{resource}: 0"
    if switch is not None:
        plan.warnings.append(
            f"pod_config sets {switch}, which turns {fabric.value} off: NCCL will run over TCP sockets, "
            f"so the plan's fabric is socket, not {fabric.value}; drop that value to keep {fabric.value}"
        )
        plan.fabric_reason = f"pod_config {switch} turns {fabric.value} off (planned: {plan.fabric_reason})"
        plan.fabric, plan.nic_count, plan.tier_planned = FabricName.SOCKET, 0, Tier.STANDARD
        plan.baseline_variant = "socket"
        plan.log_proof = network_proof(get_fabric(FabricName.SOCKET).nccl_net)
        return
    if devices is not None and resource == "vpc.amazonaws.com/efa" and devices < plan.nic_count:
        plan.warnings.append(
            f"pod_config requests {devices} {resource} of the {plan.nic_count} planned: NCCL gets about "
            f"{devices}/{plan.nic_count} of the EFA bandwidth ({efa_count_figures()}); drop your {resource} "
            "value to use all of them"
        )
        plan.fabric_reason += f"; pod_config reduces it to {devices}"
        plan.nic_count = devices
        plan.baseline_variant = f"efa-x{devices}"
