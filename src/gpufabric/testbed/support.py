"""Can this machine build a test bed, and which faults can it shape? Asked once, answered as data.

``probe_support`` tries the real thing in a namespace of its own (named like a bed, its lock held, so a
sweep elsewhere leaves it alone and a killed probe is swept): add the namespace, a veth pair, a bridge,
then each qdisc a fault uses on the probe's loopback. Nothing outside that namespace is touched. A
missing piece is one line in ``BedSupport.reason`` or ``missing_qdiscs`` (tests skip with it).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from gpufabric.errors import TestbedError
from gpufabric.testbed.commands import in_namespace, run_command
from gpufabric.testbed.names import BedNames, new_run_id
from gpufabric.testbed.sweep import LOCK_DIR, RunLock, delete_namespaces

QDISC_TRIALS: dict[str, list[str]] = {
    "sch_tbf": ["root", "tbf", "rate", "1mbit", "burst", "32kb", "latency", "50ms"],
    "sch_htb": ["root", "handle", "1:", "htb", "default", "1"],
    "sch_netem": ["root", "netem", "delay", "1ms"],
}
"""What each kernel module is tried with (``tc qdisc replace dev lo ...``); this kernel may build them in."""
FILTER_TRIAL = ["filter", "replace", "dev", "lo", "parent", "1:", "protocol", "ip", "prio", "1", "bpf",
                "bytecode", "1,6 0 0 0", "classid", "1:1"]  # fmt: skip
"""cls_bpf with classic BPF (``tc ... bpf bytecode``: the lossy path's random drop), under the htb root."""
QDISC_USES = {"sch_tbf": "slow-nic", "sch_htb": "slow-path", "sch_netem": "slow-path delay",
              "cls_bpf": "slow-path loss"}  # fmt: skip
KERNEL_OPTIONS = {"sch_tbf": "CONFIG_NET_SCH_TBF", "sch_htb": "CONFIG_NET_SCH_HTB",
                  "sch_netem": "CONFIG_NET_SCH_NETEM", "cls_bpf": "CONFIG_NET_CLS_BPF"}  # fmt: skip
TOOLS = ("ip", "tc", "taskset", "cat")


class BedSupport(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    reason: str | None = Field(description="why no bed can be built here; None: beds work")
    missing_qdiscs: list[str] = Field(
        default_factory=list, description="kernel qdiscs (and cls_bpf) that failed to load"
    )

    @property
    def ok(self) -> bool:
        return self.reason is None

    def qdisc_reason(self, module: str) -> str | None:
        """One line when ``module`` (sch_tbf, sch_htb, sch_netem, cls_bpf) is missing; None when it works."""
        if module not in self.missing_qdiscs:
            return None
        return (f"{module} is not in this kernel ({QDISC_USES[module]} needs it): "
                f"modprobe {module}, or a kernel with {KERNEL_OPTIONS[module]}")  # fmt: skip


def probe_support(lock_dir: Path = LOCK_DIR) -> BedSupport:
    """Try a namespace, a veth, a bridge and every qdisc, here and now."""
    missing_tools = [tool for tool in TOOLS if shutil.which(tool) is None]
    if missing_tools:
        return BedSupport(reason=f"{', '.join(missing_tools)} not found; apt-get install iproute2 util-linux")
    if os.geteuid() != 0:
        return BedSupport(reason="network namespaces need root (CAP_NET_ADMIN and /run/netns); run as root")
    names = BedNames(new_run_id())
    lock = RunLock(names.run_id, lock_dir)
    try:
        lock.acquire()
    except OSError as exc:
        return BedSupport(reason=f"cannot write the test bed lock {lock.path}: {exc.strerror}")
    namespace = names.namespace(0)
    try:
        try:
            run_command(["ip", "netns", "add", namespace], what="probe: a network namespace")
            run_command(["ip", "-n", namespace, "link", "add", names.interface(0), "type", "veth",
                         "peer", "name", names.port(0)], what="probe: a veth pair")  # fmt: skip
            run_command(["ip", "-n", namespace, "link", "add", names.bridge, "type", "bridge"],
                        what="probe: a bridge")  # fmt: skip
            run_command(["ip", "-n", namespace, "link", "set", "lo", "up"], what="probe: loopback up")
        except TestbedError as exc:
            return BedSupport(reason=f"no test bed here: {exc}")
        missing = []
        for module, args in QDISC_TRIALS.items():
            trial = in_namespace(namespace, ["tc", "qdisc", "replace", "dev", "lo", *args])
            if run_command(trial, check=False).returncode != 0:
                missing.append(module)
        # Last, under an htb root again (without htb there is no class to send packets to).
        run_command(in_namespace(namespace, ["tc", "qdisc", "del", "dev", "lo", "root"]), check=False)
        htb = in_namespace(namespace, ["tc", "qdisc", "add", "dev", "lo", *QDISC_TRIALS["sch_htb"]])
        bpf = in_namespace(namespace, ["tc", *FILTER_TRIAL])
        if "sch_htb" in missing or any(run_command(c, check=False).returncode for c in (htb, bpf)):
            missing.append("cls_bpf")
        return BedSupport(reason=None, missing_qdiscs=missing)
    finally:
        delete_namespaces([namespace])
        lock.release()
