"""A real multi-node test bed on one Linux machine: network namespaces as nodes, one veth NIC each, a
bridge in a namespace of its own, and faults shaped with ``tc`` (root needed; nothing leaves the bed).

Public API:
    ``Testbed`` / ``BedSpec``     build, use, always tear down (``with Testbed(BedSpec(nodes=8)) as bed``)
    ``SlowNic``, ``SlowPath``, ``DeadLink``, ``StarvedNode``: faults by name (``bed.apply`` / ``bed.fault``)
    ``probe_support`` / ``BedSupport``: can this machine build one, which qdiscs it has
    ``sweep_leftovers``: remove the beds of dead owners (every build runs it first)
    ``NicBytes``, ``read_nic_bytes``, ``must_move``: a node NIC's byte counters and a collective's bytes

Ranks run on the bed through the local launcher with one seat per node (``launch.seats``), so every
mode's jobs (bench, tune, isolate) run there unchanged: ``Execution(launcher=bed.launcher)``, or
``prepare_isolate(..., launchers=bed.launcher_chooser())``; or through OpenMPI:
``bed.mpirun_launcher()`` (``testbed.mpirun``, daemons started in their namespaces by
``testbed.rsh_agent``). Why this lives in the library and not in the tests: docs/testbed.md.
"""

from typing import TYPE_CHECKING

from gpufabric._lazy import lazy_package

if TYPE_CHECKING:  # the public names, each imported on first use (gpufabric._lazy)
    from gpufabric.testbed.bed import BedSpec, Testbed
    from gpufabric.testbed.counters import NicBytes, must_move, read_nic_bytes
    from gpufabric.testbed.faults import BedFault, DeadLink, SlowNic, SlowPath, StarvedNode
    from gpufabric.testbed.names import PREFIX, BedNames
    from gpufabric.testbed.support import BedSupport, probe_support
    from gpufabric.testbed.sweep import sweep_leftovers
lazy_package(__name__)

__all__ = [
    "PREFIX",
    "BedFault",
    "BedNames",
    "BedSpec",
    "BedSupport",
    "DeadLink",
    "NicBytes",
    "SlowNic",
    "SlowPath",
    "StarvedNode",
    "Testbed",
    "must_move",
    "probe_support",
    "read_nic_bytes",
    "sweep_leftovers",
]
