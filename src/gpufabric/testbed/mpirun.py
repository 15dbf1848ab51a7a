"""mpirun across a bed's namespaces: the ``mpirun`` launcher, pointed at the nodes' veths.

mpirun itself runs inside node 0's namespace (the host's namespace has no route into the bed, and must
not get one); its hosts are the nodes' addresses; the daemons start through ``testbed.rsh_agent``
(``plm_rsh_agent``) inside their nodes' namespaces; OpenMPI's out-of-band channel and its TCP BTL are
held to the bed's subnet (``oob_tcp_if_include`` / ``btl_tcp_if_include`` take a subnet, which is what
works when each node's NIC has its own name). Everything else is the ``mpirun`` launcher's own plan.
"""

from __future__ import annotations

import sys

from gpufabric.launch.base import LaunchOutcome, LaunchPlan, OutputSink, RankProgram
from gpufabric.launch.mpirun import MpirunLauncher, MpirunOptions
from gpufabric.testbed.commands import in_namespace
from gpufabric.testbed.names import BedNames


class BedMpirun:
    """The mpirun launcher on a bed's ``nodes`` (named by ``names``), ``ranks_per_node`` ranks each.

    It takes the bed's names and node count, not the bed: ``Testbed.mpirun_launcher`` builds it, and this
    module does not import the bed's back."""

    name = "mpirun"

    def __init__(self, names: BedNames, nodes: int, ranks_per_node: int = 1) -> None:
        agent = f"{sys.executable} -m gpufabric.testbed.rsh_agent {names.run_id} --subnet {names.subnet}"
        self.names, self.nodes = names, nodes
        self.inner = MpirunLauncher(
            MpirunOptions(
                hosts=[f"{names.address(k)}:{ranks_per_node}" for k in range(nodes)],
                mca=[
                    ("plm_rsh_agent", agent),
                    ("oob_tcp_if_include", names.subnet),
                    ("btl_tcp_if_include", names.subnet),
                    ("btl", "tcp,self"),
                ],
            )
        )

    def render(self, program: RankProgram) -> LaunchPlan:
        plan = self.inner.render(program.model_copy(update={"nodes": self.nodes}))
        node0, nic = self.names.namespace(0), self.names.interface(0)
        # Node 0's ranks are mpirun's own children: they get its NIC here (not through -x, which would
        # give every node node 0's interface name).
        commands = [
            c.model_copy(update={"argv": in_namespace(node0, c.argv),
                                 "env": {**c.env, "GLOO_SOCKET_IFNAME": nic, "NCCL_SOCKET_IFNAME": nic}})
            for c in plan.commands
        ]  # fmt: skip
        notes = [*plan.notes, f"mpirun runs in {node0}; daemons start in their nodes' namespaces"]
        return plan.model_copy(update={"commands": commands, "notes": notes})

    def execute(
        self, plan: LaunchPlan, *, on_output: OutputSink | None = None, timeout_s: float | None = None
    ) -> LaunchOutcome:
        return self.inner.execute(plan, on_output=on_output, timeout_s=timeout_s)
