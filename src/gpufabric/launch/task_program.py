"""A task as a ``RankProgram``: one process per node running a small bash wrapper that sets SkyPilot's
per-node variables, runs ``setup`` and then ``run`` (SkyPilot semantics: once per node, not per GPU;
the run script itself starts mpirun, torchrun ... when it wants one process per GPU).

The wrapper is inline (``bash -c SCRIPT``), so it needs no shared filesystem and works unchanged under
every launcher: it reads the node rank from whichever launcher started it (see
``gpufabric.launch.identity.NODE_RANK_SOURCES``) and the node addresses from ``GPUFABRIC_NODE_IPS``,
which the launcher sets (the Slurm batch script computes it from the allocation at run time).
"""

from __future__ import annotations

import shlex
from pathlib import Path

from gpufabric.boundary_names import (
    GPUS_PER_NODE_ENV,
    NODE_IPS_ENV,
    NODE_RANK_ENV,
    NUM_NODES_ENV,
    TASK_ID_ENV,
)
from gpufabric.errors import UsageError
from gpufabric.launch.base import RankProgram
from gpufabric.launch.identity import NodeLayout, new_task_id, node_rank_expression
from gpufabric.task.model import Task

NODE_WRAPPER_NAME = "gpufabric-node"

_WRAPPER = """\
# gpufabric node wrapper for task {name}: SkyPilot's per-node variables, then setup, then run.
_gf_rank="{rank_expr}"
export {node_rank}="$_gf_rank" SKYPILOT_NODE_RANK="$_gf_rank"
if [ -z "${{{node_ips}:-}}" ]; then
  # A launcher that names no addresses put every node on this host (local virtual nodes).
  {node_ips}=$(for ((_i = 0; _i < ${{{num_nodes}:-1}}; _i++)); do printf '127.0.0.1,'; done)
  export {node_ips}="${{{node_ips}%,}}"
fi
export SKYPILOT_NODE_IPS="$(printf '%s' "${node_ips}" | tr ',' '\\n')"
export SKYPILOT_NUM_NODES="${{{num_nodes}:-1}}"
export SKYPILOT_NUM_GPUS_PER_NODE="${{{gpus_per_node}:-0}}"
export SKYPILOT_TASK_ID="${{{task_id}:-}}"
# A run script that starts its own mpirun (as the seeds' do) must not inherit the outer launcher's
# MPI identity: with OMPI_* inherited, mpirun stops with "mpirun does not support recursive calls".
for _gf_var in $(compgen -e); do
  case "$_gf_var" in OMPI_*|PMIX_*|OPAL_*) unset "$_gf_var" ;; esac
done
unset _gf_var
_gf_setup={setup}
_gf_run={run}
if [ -n "$_gf_setup" ]; then
  SKYPILOT_SETUP_NODE_RANK="$_gf_rank" SKYPILOT_SETUP_NODE_IPS="$SKYPILOT_NODE_IPS" bash -c "$_gf_setup"
  _gf_rc=$?
  if [ "$_gf_rc" -ne 0 ]; then
    echo "gpufabric: setup failed on node $_gf_rank ($(hostname)) with exit code $_gf_rc" >&2
    exit "$_gf_rc"
  fi
fi
exec bash -c "$_gf_run"
"""


def node_wrapper(task: Task) -> str:
    """The bash text each node runs (inline in argv, so no file has to reach the node)."""
    return _WRAPPER.format(
        name=task.display_name,
        node_rank=NODE_RANK_ENV,
        node_ips=NODE_IPS_ENV,
        num_nodes=NUM_NODES_ENV,
        gpus_per_node=GPUS_PER_NODE_ENV,
        task_id=TASK_ID_ENV,
        rank_expr=node_rank_expression(),
        setup=shlex.quote(task.setup or ""),
        run=shlex.quote(task.run or ""),
    )


def task_program(
    task: Task,
    *,
    workdir: Path,
    nodes: int | None = None,
    gpus_per_node: int | None = None,
    task_id: str | None = None,
) -> RankProgram:
    """One rank per node; ``nodes``/``gpus_per_node`` override ``num_nodes``/``accelerators``."""
    if not (task.run or task.setup):
        raise UsageError(f"task {task.display_name!r} has neither `run:` nor `setup:`; nothing to launch")
    node_count = nodes if nodes is not None else task.num_nodes
    if node_count < 1:
        raise UsageError(f"--nodes {node_count}: a task runs on at least 1 node")
    gpus = gpus_per_node if gpus_per_node is not None else task.resources.gpus_per_node
    env = {**{k: v for k, v in task.envs.items() if v is not None}}
    env[TASK_ID_ENV] = task_id or new_task_id(task.display_name)
    return RankProgram(
        argv=["bash", "-c", node_wrapper(task), NODE_WRAPPER_NAME],
        env=env,
        nranks=node_count,
        nodes=node_count,
        gpus_per_node=gpus,
        workdir=workdir,
        label=task.display_name,
    )


def program_layout(
    program: RankProgram, addresses: list[str], *, launcher: str, master_port: int
) -> NodeLayout:
    """The node layout a launcher gives ``program`` on ``addresses`` (one a node, head first), under the
    task's id when ``task_program`` made it (the task's nodes share it), else a new one for its label."""
    return NodeLayout(
        node_addresses=addresses,
        gpus_per_node=program.gpus_per_node,
        task_id=program.env.get(TASK_ID_ENV) or new_task_id(program.label),
        launcher=launcher,
        master_port=master_port,
    )


def is_task_program(program: RankProgram) -> bool:
    """True for programs made by ``task_program`` (one process per node, SkyPilot semantics)."""
    return program.argv[-1:] == [NODE_WRAPPER_NAME] and program.argv[:2] == ["bash", "-c"]
