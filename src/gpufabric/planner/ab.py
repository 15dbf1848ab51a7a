"""Fabric A/B profiles: the environment of a run with the fabric on, and of its twin with the fabric off.

One definition serves every A/B feature (``bench --ab``, ``tune``'s baseline, ``train-bench --ab``), so an A/B
of the benchmark and an A/B of training compare the same two configurations.

- With an instance type, the planner's own resolution decides: the fabric's env on, its off profile off
  (e.g. EFA: ``FI_PROVIDER=efa`` vs ``NCCL_NET=Socket``; TCPX: plugin path dropped).
- On one host without one, the fabric is NVLink/PCIe: off = ``NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1``, which
  forces NET/Socket between GPUs of the same host (what the nccl-tests anchors call the socket path).
- Across nodes without one, off = ``NCCL_NET=Socket``: NCCL's own TCP transport instead of whatever network
  NCCL picked (IB, a net plugin), the stricter off switch the reference sheet recommends.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field

from gpufabric.catalog import FabricName, get_fabric
from gpufabric.errors import UsageError
from gpufabric.planner.fabric_env import HABANA, HABANA_OFF_DESCRIPTION
from gpufabric.planner.model import PlanRequest
from gpufabric.planner.resolve import resolve


class FabricProfile(BaseModel):
    """One side of an A/B: environment to set on every rank and names to remove from it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(description="fabric-on / fabric-off, or a configuration A/B's side names (A, B)")
    env: dict[str, str] = Field(default_factory=dict)
    unset: tuple[str, ...] = Field(
        default=(), description="variables (or NAME_ prefixes) removed from the rank env"
    )
    description: str = ""

    def apply(self, base: dict[str, str]) -> dict[str, str]:
        """``base`` with this profile's removals and settings applied."""

        def removed(name: str) -> bool:
            return any(name.startswith(p) if p.endswith("_") else name == p for p in self.unset)

        return {k: v for k, v in base.items() if not removed(k)} | self.env


class ABProfiles(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    fabric: str = Field(description="the fabric the A/B switches on and off")
    on: FabricProfile
    off: FabricProfile


def ab_profiles(*, nodes: int = 1, instance_type: str | None = None) -> ABProfiles:
    """The two profiles of a fabric A/B for this shape and node count (pure; touches nothing)."""
    if instance_type is not None:
        res = resolve(PlanRequest(instance_type=instance_type, nodes=max(nodes, 1)))
        spec = get_fabric(res.fabric)
        if nodes > 1 or res.fabric is FabricName.SOCKET:
            habana = res.instance is not None and res.instance.accelerator_kind == HABANA
            unset = () if habana else spec.off_unset  # Gaudi's A/B keeps EFA on: only peer direct flips
            removed = tuple(dict.fromkeys([*(n for n in res.env if n not in res.off_env), *unset]))
            return ABProfiles(
                fabric=str(res.fabric.value),
                on=FabricProfile(name="fabric-on", env=res.env, description=res.reason),
                off=FabricProfile(
                    name="fabric-off",
                    env=res.off_env,
                    unset=removed,
                    description=HABANA_OFF_DESCRIPTION if habana else spec.off_description,
                ),
            )
    if nodes <= 1:
        spec = get_fabric(FabricName.NVLINK)
        return ABProfiles(
            fabric=FabricName.NVLINK.value,
            on=FabricProfile(
                name="fabric-on", description="NCCL's default intra-node path (NVLink/PCIe P2P)"
            ),
            off=FabricProfile(name="fabric-off", env=dict(spec.off_env), description=spec.off_description),
        )
    return ABProfiles(
        fabric="network",
        on=FabricProfile(name="fabric-on", description="the network NCCL selects (IB, a net plugin, ...)"),
        off=FabricProfile(
            name="fabric-off",
            env={"NCCL_NET": "Socket"},
            description="NCCL_NET=Socket: NCCL's own TCP transport between nodes",
        ),
    )


CONFIG_FABRIC = "config"
"""The ``fabric`` of an A/B of two configurations (``bench --ab-a/--ab-b``): no fabric is switched."""


def _words(env: dict[str, str]) -> str:
    return " ".join(f"{k}={v}" for k, v in sorted(env.items())) or "the environment as it is"


CONFIG_SIDE_NAMES = ("A", "B")
_SIDE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_TAKEN_NAMES = ("ab", "fabric-on", "fabric-off")  # ab.json is the document; the others, a fabric A/B's


def side_names(text: str) -> tuple[str, str]:
    """``--ab-names A_NAME,B_NAME`` as two names that can also name files (``<root>/<name>.json``)."""
    names = tuple(part.strip() for part in text.split(","))
    if len(names) != 2 or names[0] == names[1] or not all(_SIDE_NAME.fullmatch(n) for n in names):
        raise UsageError(
            f"--ab-names: {text!r} is not two different names; give NAME_A,NAME_B of letters, digits, "
            "'.', '_' or '-' (e.g. --ab-names nccl-2.28.9,nccl-2.31.2)"
        )
    if taken := [n for n in names if n.lower() in _TAKEN_NAMES]:
        raise UsageError(f"--ab-names: {taken[0]!r} is a name the A/B writes itself; choose another")
    return names[0], names[1]


def config_profiles(
    a_env: dict[str, str], b_env: dict[str, str], names: tuple[str, str] = CONFIG_SIDE_NAMES
) -> ABProfiles:
    """Two configurations as the A/B's two sides, named ``names`` (A and B unless the user named them):
    A in the first slot (the reference), B in the second (the candidate: a new NCCL through
    GPUFABRIC_NCCL_LIB or LD_LIBRARY_PATH, a plugin, any variables)."""
    return ABProfiles(
        fabric=CONFIG_FABRIC,
        on=FabricProfile(name=names[0], env=a_env, description=_words(a_env)),
        off=FabricProfile(name=names[1], env=b_env, description=_words(b_env)),
    )
