"""What ``gpufabric isolate`` is asked to do, with the command's defaults, as one model: calling the
library with an ``IsolateRequest`` gives what the command line gives. Its checks say what is wrong in one
line (``UsageError``) before anything runs; ``jobs.isolate`` prepares and runs it.

One request serves both modes: ``simulate`` searches a simulated cluster (the simulator's fields), else
the same search measures real ranks (the real-run fields; how the rounds' jobs run is the caller's
``Execution`` and launchers).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import get_args

from gpufabric.analysis.isolate import (
    SLURM_NODELIST,
    ClusterModel,
    JudgeSettings,
    build_simulation,
    expand_nodelist,
    numbered_nodes,
    read_hostfile,
    read_node_list,
)
from gpufabric.bench.group_statistic import DEFAULT_STATISTIC, GPU_STATISTIC, GroupStatistic, parse_statistic
from gpufabric.bench.groups import GroupCollective
from gpufabric.errors import UsageError
from gpufabric.launch.names import LAUNCHER_KINDS, RUNNING_LAUNCHERS
from gpufabric.options import IsolateOptions

COLLECTIVES: tuple[str, ...] = get_args(GroupCollective)
"""What a group test runs: alltoall (every pair of a group meets) or all_reduce."""
# The simulator's floor: its noise is the 3% it was told.
SIMULATED_MIN_DROP = 0.10
# Real runs carry launch and scheduling jitter the simulator's 3% noise does not, and with fewer than 8
# groups there is no peer spread to learn it from: a 25% floor still catches a node at 3/4 speed.
REAL_MIN_DROP = 0.25
# Up to "flag only groups below a tenth of the reference", for hosts whose healthy groups vary 2x.
MAX_MIN_DROP = 0.9
# A conviction's rank test (analysis/isolate/proof.py): above 20% false alarms it proves nothing; 30
# retests of one suspect are 30 rounds, already far past what any cluster needs.
MAX_ALPHA, MAX_REPEATS = 0.2, 30
# Bytes per group test when --size is not given: GPUs need a size that reaches their bandwidth.
CPU_SIZE, GPU_SIZE = "1M", "64M"
# Seconds per timed batch: a shared CPU host needs long batches to average out its scheduler (healthy
# pairs' 200 ms batches ranged 0.7-3.6 ms per iteration here). CPU rounds and virtual nodes (NET/Socket
# through the host's kernel) read the median of 5; both measured (certify's GPU tests on virtual nodes:
# 0 false failures).
CPU_BATCH_S, CPU_BATCHES, CPU_ITERS = 0.1, 5, 20
GPU_BATCH_S, GPU_BATCHES, GPU_ITERS = 0.02, 5, 20
# GPUs talking directly read median+tail10 (bench.group_statistic) of many short batches, so that a load
# busy part of the time fills whole batches and the window (100 x 5 ms, about 0.5 s) spans several of
# its cycles (a 50 ms burst every 200 ms); 1 iteration at least, the batch's seconds set the count. Also
# what --statistic tail10 or p95 between GPUs use. On 4x H200 (2026-11-27) tail10 alone convicted the
# light load in 1 of 2 runs and missed the heavy one; the median alone found the heavy one and missed
# the light one (docs/benchmarks.md §7, §8): the blend reads each at the statistic that sees it.
TAIL_BATCH_S, TAIL_BATCHES, TAIL_ITERS = 0.005, 100, 1


class IsolateRequest(IsolateOptions):
    """One ``gpufabric isolate`` request: its fields and defaults are ``options.IsolateOptions``."""

    def judge_settings(self) -> JudgeSettings:
        """How a group is judged short and a suspect convicted; the flags checked."""
        if self.group_size < 2:
            raise UsageError(
                f"--group-size {self.group_size}: a group needs at least 2 nodes; e.g. --group-size 2"
            )
        default = SIMULATED_MIN_DROP if self.simulate else REAL_MIN_DROP
        drop = self.min_drop if self.min_drop is not None else default
        if not self.k_sigma > 0 or not 0 < drop <= MAX_MIN_DROP:  # "not >" also refuses nan
            raise UsageError(
                f"--k-sigma {self.k_sigma} / --min-drop {drop}: need k > 0 and 0 < min-drop <= {MAX_MIN_DROP}"
            )
        repeats = self.repeats
        if not 0 < self.alpha <= MAX_ALPHA or (repeats is not None and not 2 <= repeats <= MAX_REPEATS):
            raise UsageError(
                f"--alpha {self.alpha} / --repeats {repeats}: need 0 < alpha <= {MAX_ALPHA} (e.g. 0.01) "
                f"and 2 <= repeats <= {MAX_REPEATS} (or leave --repeats out)"
            )
        # A floor above the judge's usual 40% ceiling (a very noisy host) raises the ceiling with it.
        return JudgeSettings(
            k_sigma=self.k_sigma,
            min_drop=drop,
            max_drop=max(JudgeSettings().max_drop, drop),
            alpha=self.alpha,
            repeats=repeats,
        )

    def node_names(self, environ: Mapping[str, str]) -> tuple[list[str], str]:
        """(node names, where they came from). A real ``--on slurm`` run without a source takes the
        allocation's nodes from ``environ`` (SLURM_JOB_NODELIST)."""
        given = [flag for flag, v in (("--nodes", self.nodes), ("--hostfile", self.hostfile),
                                      ("--node-list", self.node_list)) if v is not None]  # fmt: skip
        kind = LAUNCHER_KINDS.get(self.on or "")  # not checked yet: launcher_name refuses a misspelt one
        allocation = environ.get(SLURM_NODELIST) if kind and kind.pins_nodes and not self.simulate else None
        if not given and allocation:
            return _two_or_more(expand_nodelist(allocation, SLURM_NODELIST), SLURM_NODELIST)
        if len(given) != 1:
            raise UsageError(
                f"isolate needs exactly one node source, got {len(given)} ({', '.join(given) or 'none'}); "
                "pass --nodes N, --hostfile PATH or --node-list PATH (or run --on slurm in an allocation)"
            )
        if self.hostfile is not None:
            return _two_or_more(read_hostfile(self.hostfile), f"--hostfile {self.hostfile}")
        if self.node_list is not None:
            return _two_or_more(read_node_list(self.node_list), f"--node-list {self.node_list}")
        assert self.nodes is not None  # exactly one source was given
        return numbered_nodes(self.nodes), f"--nodes {self.nodes}"

    def simulation(self, names: list[str]) -> ClusterModel:
        """The simulated cluster of ``names`` with the requested faults; every bad flag is one line."""
        return build_simulation(
            names, bad=self.bad, bad_links=self.bad_links, slow_factor=self.slow_factor,
            link_factor=self.link_factor, noise=self.noise, seed=self.seed,
        )  # fmt: skip

    def launcher_name(self, node_source: str) -> str:
        """The launcher every round runs through: ``on``, else mpirun with a hostfile, else local."""
        name = self.on or ("mpirun" if self.hostfile else "local")
        named_nodes = self.node_list is not None or node_source == SLURM_NODELIST
        kind = LAUNCHER_KINDS.get(name)  # a misspelt name: refused below, after the flags' own lines
        if named_nodes and not (kind and kind.pins_nodes):
            # Kubernetes pods (pod/NAME lines) cannot host real rounds: say what does work with them.
            raise UsageError(
                f"--node-list with --on {name}: real rounds run only on listed Slurm nodes (--on slurm); "
                "search these names in the simulator with --simulate --node-list PATH, or measure real "
                "ranks with --on slurm --node-list PATH, --on mpirun --hostfile PATH or --nodes N (local "
                "ranks)"
            )
        if self.hostfile and not (kind and kind.takes_hosts):
            raise UsageError(f"--hostfile: only --on mpirun places ranks on hosts, not --on {name}")
        if not (kind and kind.runs_jobs):
            *first, last = RUNNING_LAUNCHERS
            raise UsageError(f"--on {name!r}: isolate runs rounds through {', '.join(first)} or {last}")
        return name

    def check_measurement(self, nodes: int, ranks: int | None) -> None:
        """The real-run flags, for ``nodes`` nodes and the caller's ``ranks`` (``--ranks``)."""
        if self.collective not in COLLECTIVES:
            raise UsageError(f"--collective {self.collective!r}: choose from {', '.join(COLLECTIVES)}")
        if ranks is not None and ranks != nodes:
            raise UsageError(
                f"--ranks {ranks}: isolate runs one rank per node ({nodes} nodes); pass --ranks {nodes} "
                "(isolate measures one rank, one GPU, per node)"
            )
        if (self.iters or 1) < 1 or (self.batches or 1) < 1 or not 0 < (self.batch_seconds or 1) <= 60:
            raise UsageError(
                f"--iters {self.iters} / --batches {self.batches} / --batch-seconds "
                f"{self.batch_seconds}: iterations and batches 1 or more, seconds in (0, 60]"
            )
        self.group_statistic()  # a misspelt --statistic is refused before any round
        if self.expected_gbps is not None and self.expected_gbps <= 0:
            raise UsageError(f"--expected-gbps {self.expected_gbps}: give a positive busbw, e.g. 180")

    def group_statistic(self, direct_gpus: bool = False) -> GroupStatistic:
        """What each group test's batch times are reduced to (``bench.group_statistic``): ``statistic``,
        else median+tail10 between GPUs that talk directly (``direct_gpus``: not virtual nodes), else the
        median (``TAIL_*`` settings go with every statistic but the median between GPUs)."""
        if self.statistic is not None:
            return parse_statistic("--statistic", self.statistic)
        return GPU_STATISTIC if direct_gpus else DEFAULT_STATISTIC


def _two_or_more(names: list[str], source: str) -> tuple[list[str], str]:
    """``names`` from ``source`` when there are at least two: isolate compares nodes in groups of 2 or
    more, so one node has nothing to be measured against (a hostfile of one suspect, as ``watch`` writes
    when the job ran on one node)."""
    if len(names) < 2:
        listed = f"1 node ({names[0]})" if names else "no node"
        raise UsageError(
            f"{source}: {listed}; isolate measures nodes against each other in groups of 2 or more, so it "
            "needs at least 2 nodes: add a healthy node as a control (one host per line)"
        )
    return names, source
