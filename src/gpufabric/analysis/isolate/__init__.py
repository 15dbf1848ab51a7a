"""Find the slow node or link among thousands with adaptive group testing (``gpufabric isolate``).

Public API:
    ``run_isolation(measurer, names, options) -> IsolationReport``  the search against any measurer
    ``simulate(model, names, options) -> IsolationReport``           the same search on a simulated cluster
    ``GroupMeasurer`` / ``GroupMeasurement``   the seam a measurer implements: the simulator's, and
    ``EngineMeasurer`` over real rounds, whose answer is a ``MeasuredIsolation``
    ``ClusterModel``, ``SimulatedMeasurer``, ``build_simulation``, ``SearchOptions``, ``JudgeSettings``
    ``planned_screen``: the first round's groups, known before any measurement
    ``isolation_cost(node_count, options, seconds_per_round) -> IsolationCost``: rounds, group tests
    and time of a clean search and of one with a slow node or link, before anything runs
    node sources: ``numbered_nodes``, ``read_hostfile``, ``read_node_list``, ``expand_nodelist``

Modules: ``measurer`` (the seam), ``simulator`` (cluster model), ``engine_measurer`` (real rounds' seam),
``stats`` (median/MAD reference), ``blend`` (a group's median and tail readings as one busbw), ``proof``
(the retests' rank and scaled tests), ``tasks`` (split / cross investigations), ``confirm`` (node or
link, proven beside controls), ``sweep`` (links between groups), ``search`` (rounds and scheduling),
``plan`` (the cost up front), ``report`` + ``model`` (typed output), ``nodes`` (node sources, fault
flags), ``hosts`` (nodes sharing a machine). Running real rounds is ``gpufabric.jobs.isolate``'s; the
text and JSON are ``gpufabric.report.isolate_render``'s.
"""

from __future__ import annotations

from collections.abc import Sequence

from gpufabric.analysis.isolate.engine_measurer import EngineMeasurer, MeasuredIsolation, RoundRunner
from gpufabric.analysis.isolate.hosts import shared_host_note, shared_hosts
from gpufabric.analysis.isolate.measurer import GroupMeasurement, GroupMeasurer, NodeId
from gpufabric.analysis.isolate.model import Evidence, IsolationReport, NodeVerdict, Suspect
from gpufabric.analysis.isolate.nodes import (
    build_simulation,
    numbered_nodes,
    read_hostfile,
    read_node_list,
)
from gpufabric.analysis.isolate.plan import IsolationCost, SearchCost, isolation_cost, round_bound
from gpufabric.analysis.isolate.report import build_report
from gpufabric.analysis.isolate.search import SearchOptions, isolate, planned_screen
from gpufabric.analysis.isolate.simulator import (
    ClusterModel,
    IntermittentNode,
    LinkDegradation,
    SimulatedMeasurer,
)
from gpufabric.analysis.isolate.stats import JudgeSettings, Reference
from gpufabric.launch.hostlist import SLURM_NODELIST, expand_nodelist


def run_isolation(
    measurer: GroupMeasurer, names: Sequence[str], options: SearchOptions | None = None
) -> IsolationReport:
    """Search ``measurer``'s nodes (named ``names``, one per node id) and return the named report."""
    options = options or SearchOptions()
    if len(names) != measurer.node_count:
        raise ValueError(f"{len(names)} names for {measurer.node_count} nodes")
    outcome = isolate(measurer, options)
    return build_report(outcome, names, min(options.group_size, measurer.node_count))


def simulate(
    model: ClusterModel, names: Sequence[str] | None = None, options: SearchOptions | None = None
) -> IsolationReport:
    """The search on the simulated cluster ``model``."""
    return run_isolation(SimulatedMeasurer(model), names or numbered_nodes(model.node_count), options)


__all__ = [
    "SLURM_NODELIST",
    "ClusterModel",
    "EngineMeasurer",
    "Evidence",
    "GroupMeasurement",
    "GroupMeasurer",
    "IntermittentNode",
    "IsolationCost",
    "IsolationReport",
    "JudgeSettings",
    "LinkDegradation",
    "MeasuredIsolation",
    "NodeId",
    "NodeVerdict",
    "Reference",
    "RoundRunner",
    "SearchCost",
    "SearchOptions",
    "SimulatedMeasurer",
    "Suspect",
    "build_simulation",
    "expand_nodelist",
    "isolation_cost",
    "numbered_nodes",
    "planned_screen",
    "read_hostfile",
    "read_node_list",
    "round_bound",
    "run_isolation",
    "shared_host_note",
    "shared_hosts",
    "simulate",
]
