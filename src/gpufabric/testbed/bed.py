"""A small real cluster on one machine: N network namespaces as nodes, each with one NIC (a veth) into a
bridge that lives in a namespace of its own, so the host's network is never part of it.

    with Testbed(BedSpec(nodes=8, nic_rate_mbit=200)) as bed:
        bed.apply(SlowNic(node=3, rate_mbit=40))
        run_bench_job(prepare_bench(request, Execution(launcher=bed.launcher, ranks=8)))

Life cycle: ``build`` sweeps leftovers of dead beds (``testbed.sweep``), takes this bed's lock, then adds
the namespaces, the bridge, one veth pair per node (created in place: ``ip -n NODE link add ... peer
... netns BRIDGE``, never in the host's namespace), addresses and the NIC rate. ``teardown`` stops the
loads and every process left in the namespaces and deletes them; it runs on leaving the ``with`` block,
at interpreter exit (``atexit``) and on SIGTERM/SIGHUP (turned into ``Interrupted`` while the bed is up,
where nothing else handles them); a SIGKILLed owner's bed is removed by the next build's sweep. Faults
are ``testbed.faults``; each change recomputes the qdiscs of the interfaces it touches.
"""

from __future__ import annotations

import atexit
import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from types import TracebackType
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from gpufabric.launch.base import Launcher
from gpufabric.launch.seats import NodeSeat
from gpufabric.launch.signals import stopping_on_signals
from gpufabric.testbed.commands import in_namespace, run_command
from gpufabric.testbed.counters import NicBytes, read_nic_bytes
from gpufabric.testbed.faults import (
    BedFault,
    egress_commands,
    fault_nodes,
    ingress_commands,
    link_down,
    slowest_rate,
    starving_core,
)
from gpufabric.testbed.load import CpuLoad
from gpufabric.testbed.names import DEFAULT_SUBNET, MAX_NODES, BedNames, check_subnet, new_run_id
from gpufabric.testbed.sweep import RunLock, delete_namespaces, sweep_leftovers

if TYPE_CHECKING:
    from gpufabric.expect.net_ceilings import ShapedLink

NAMED_HOST = ["unshare", "--uts", "sh", "-c", 'hostname "$0" && exec "$@"']
"""Put before ``NAME PROGRAM...``: runs PROGRAM (same process, via exec) with host name NAME."""


class BedSpec(BaseModel):
    """What to build: how many nodes, their NICs' rate, the private range used inside the bed."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    nodes: int = Field(default=4, ge=2, le=MAX_NODES)
    nic_rate_mbit: float | None = Field(
        default=None, gt=0, description="every node's NIC rate both ways; None: the veths' own speed"
    )
    subnet: str = DEFAULT_SUBNET


class Testbed:
    """One bed: ``with Testbed(spec) as bed`` builds it and always tears it down."""

    __test__ = False  # pytest: a class named Test* that is not a test

    def __init__(self, spec: BedSpec | None = None, *, run_id: str | None = None) -> None:
        self.spec = spec or BedSpec()
        check_subnet(self.spec.subnet)
        self.names = BedNames(run_id or new_run_id(), self.spec.subnet)
        self.faults: list[BedFault] = []
        self.swept: list[str] = []
        self._lock = RunLock(self.names.run_id)
        self._loads: dict[int, CpuLoad] = {}
        self._built = False
        self._signals = contextlib.ExitStack()

    # -- life cycle -------------------------------------------------------------------------------
    def __enter__(self) -> Testbed:
        self.build()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.teardown()

    def build(self) -> None:
        self.swept = sweep_leftovers()
        self._lock.acquire()
        self._built = True
        atexit.register(self.teardown)
        self._catch_stop_signals()
        try:
            self._add_nodes()
        except BaseException:
            self.teardown()
            raise

    def teardown(self) -> None:
        """Remove everything this bed made; safe to call twice and after a failed build."""
        if not self._built:
            return
        for load in self._loads.values():
            load.stop()
        self._loads.clear()
        delete_namespaces(self.names.namespaces(self.spec.nodes))
        self._lock.release()
        self._built = False
        atexit.unregister(self.teardown)
        self._signals.close()

    def _catch_stop_signals(self) -> None:
        """SIGTERM/SIGHUP become ``Interrupted`` (which unwinds through ``__exit__``) where nothing else
        handles them; the CLI's own handler, when installed, already does the same."""
        if threading.current_thread() is not threading.main_thread():
            return
        free = [s for s in (signal.SIGTERM, signal.SIGHUP) if signal.getsignal(s) == signal.SIG_DFL]
        if free:
            self._signals.enter_context(stopping_on_signals(free))

    def _add_nodes(self) -> None:
        n, bridge_ns = self.names, self.names.bridge_namespace
        run_command(["ip", "netns", "add", bridge_ns], what="the bridge's namespace")
        run_command(["ip", "-n", bridge_ns, "link", "add", n.bridge, "type", "bridge"], what="the bridge")
        run_command(["ip", "-n", bridge_ns, "link", "set", n.bridge, "up"], what="the bridge up")
        for node in range(self.spec.nodes):
            ns = n.namespace(node)
            run_command(["ip", "netns", "add", ns], what=f"node {node}'s namespace")
            run_command(["ip", "-n", ns, "link", "add", n.interface(node), "type", "veth", "peer", "name",
                         n.port(node), "netns", bridge_ns], what=f"node {node}'s NIC")  # fmt: skip
            run_command(["ip", "-n", bridge_ns, "link", "set", n.port(node), "master", n.bridge, "up"],
                        what=f"node {node}'s bridge port")  # fmt: skip
            run_command(["ip", "-n", ns, "addr", "add", f"{n.address(node)}/{n.prefix_length}", "dev",
                         n.interface(node)], what=f"node {node}'s address")  # fmt: skip
            run_command(["ip", "-n", ns, "link", "set", "lo", "up"], what=f"node {node}'s loopback")
            run_command(["ip", "-n", ns, "link", "set", n.interface(node), "up"], what=f"node {node}'s NIC")
            self._shape(node)

    # -- faults -----------------------------------------------------------------------------------
    def apply(self, fault: BedFault) -> None:
        """Put ``fault`` on the bed (it stays until ``remove`` or teardown)."""
        for node in fault_nodes(fault):
            if node >= self.spec.nodes:
                raise ValueError(f"{fault.spec}: node {node} is not one of the bed's {self.spec.nodes}")
        self.faults.append(fault)
        self._refresh(fault)

    def remove(self, fault: BedFault) -> None:
        self.faults.remove(fault)
        self._refresh(fault)

    @contextlib.contextmanager
    def fault(self, fault: BedFault) -> Iterator[BedFault]:
        """``fault`` for the duration of the block."""
        self.apply(fault)
        try:
            yield fault
        finally:
            self.remove(fault)

    def _refresh(self, fault: BedFault) -> None:
        for node in fault_nodes(fault):
            self._shape(node)
            state = "down" if link_down(self.names, node, self.faults) else "up"
            run_command(["ip", "-n", self.names.namespace(node), "link", "set", self.names.interface(node),
                         state], what=f"node {node}'s NIC {state}")  # fmt: skip
            self._starve(node, starving_core(node, self.faults))

    def _shape(self, node: int) -> None:
        """Node ``node``'s qdiscs as the spec and the faults say: old roots removed, new ones added."""
        n, rate = self.names, self.spec.nic_rate_mbit
        places = [
            (n.namespace(node), n.interface(node), egress_commands(n, node, rate, self.faults)),
            (n.bridge_namespace, n.port(node), ingress_commands(n, node, rate, self.faults)),
        ]
        for namespace, interface, commands in places:
            run_command(
                in_namespace(namespace, ["tc", "qdisc", "del", "dev", interface, "root"]), check=False
            )
            for command in commands:
                run_command(in_namespace(namespace, command), what=f"shaping node {node}")

    def _starve(self, node: int, core: int | None) -> None:
        current = self._loads.get(node)
        if current is not None and current.core != core:
            current.stop()
            del self._loads[node]
        if core is not None and node not in self._loads:
            self._loads[node] = load = CpuLoad(self.names.namespace(node), core)
            load.start()

    # -- what runs on it --------------------------------------------------------------------------
    def seat(self, node: int) -> NodeSeat:
        """How a rank lands on node ``node``: inside its namespace, with the node's name as its host name,
        bound to its NIC, pinned to the load's core when the node is starved."""
        n = self.names
        # A UTS namespace of its own named after the node: every node would otherwise report this
        # machine's host name, and whatever groups ranks by host (the bench's NIC counters, one reader
        # per host) would take four nodes for one.
        prefix = in_namespace(n.namespace(node), [*NAMED_HOST, n.namespace(node)])
        core = starving_core(node, self.faults)
        if core is not None:
            prefix += ["taskset", "-c", str(core)]
        nic = n.interface(node)
        return NodeSeat(name=n.namespace(node), prefix=prefix, address=n.address(node),
                        env={"GLOO_SOCKET_IFNAME": nic, "NCCL_SOCKET_IFNAME": nic})  # fmt: skip

    def seats(self) -> list[NodeSeat]:
        return [self.seat(node) for node in range(self.spec.nodes)]

    def launcher(self) -> Launcher:
        """A fresh local launcher whose ranks run on the bed's nodes (as the faults stand now)."""
        from gpufabric.launch.local import LocalLauncher

        return LocalLauncher(seats=self.seats())

    def launcher_chooser(self) -> Callable[[str, int], Callable[[], Launcher]]:
        """isolate's launcher chooser: every round's job on the bed (``--on local``, no virtual nodes)."""

        def choose(name: str, virtual_nodes: int) -> Callable[[], Launcher]:
            if name != "local" or virtual_nodes:
                raise ValueError(f"a test bed runs isolate's rounds itself, not --on {name}")
            return self.launcher

        return choose

    def mpirun_launcher(self, ranks_per_node: int = 1) -> Launcher:
        """OpenMPI's mpirun over the bed's nodes (``testbed.mpirun``)."""
        from gpufabric.testbed.mpirun import BedMpirun

        return BedMpirun(self.names, self.spec.nodes, ranks_per_node)

    def shaped_link(self) -> ShapedLink | None:
        """The bed's path rate as the expected-performance model takes it (``tune``'s ceiling): the
        slowest NIC or path the spec and the faults shape; None when nothing is shaped."""
        from gpufabric.expect.net_ceilings import ShapedLink

        rate = slowest_rate(self.spec.nodes, self.spec.nic_rate_mbit, self.faults)
        if rate is None:
            return None
        return ShapedLink(rate_mbit=rate, nodes=self.spec.nodes, shaper="tc tbf/htb on the test bed's veths")

    def nic_bytes(self, node: int) -> NicBytes:
        return read_nic_bytes(self.names.namespace(node), self.names.interface(node))
