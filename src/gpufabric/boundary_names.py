"""The names that cross a process boundary, each spelled once: the environment variables a launcher hands
its ranks and nodes, the tags a rank prints for its supervisor to pick out of stdout, NCCL's log files,
and the directories runs are written under.

Both sides of a boundary read the name from here, so a rename reaches the writer and the reader at once.
This module imports nothing from gpufabric: a rank process, a launcher and the CLI can all import it
without pulling in each other's layers (a rank imports nothing from ``gpufabric.launch``).
``tests/test_facts_defined_once.py`` fails when another module spells one of these strings again.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

ENV_PREFIX = "GPUFABRIC_"
"""Every variable of ours starts with it (kept in a run's recorded environment, ``bench.metadata``)."""

# The node layout every launcher exports (``launch.identity.layout_env``); the node wrapper turns it into
# SkyPilot's names (``launch.task_program``).
LAUNCHER_ENV = "GPUFABRIC_LAUNCHER"
NODE_RANK_ENV = "GPUFABRIC_NODE_RANK"
NUM_NODES_ENV = "GPUFABRIC_NUM_NODES"
GPUS_PER_NODE_ENV = "GPUFABRIC_GPUS_PER_NODE"
TASK_ID_ENV = "GPUFABRIC_TASK_ID"
NODE_IPS_ENV = "GPUFABRIC_NODE_IPS"
"""Comma-separated: a comma survives ``mpirun -x`` and ``sbatch --export``, a newline does not."""
VIRTUAL_NODE_ENV = "GPUFABRIC_VIRTUAL_NODE"
"""The NCCL virtual node a rank belongs to (``--virtual-nodes``), recorded in its result."""

NCCL_LIB_ENV = "GPUFABRIC_NCCL_LIB"
"""The libnccl.so.2 the direct engine loads (``bench --nccl-lib``)."""
MPS_PIPE_ENV = "CUDA_MPS_PIPE_DIRECTORY"
"""CUDA's variable naming an MPS daemon's pipe directory: set, a process is an MPS client."""
GPU_SHARING_ENV = "GPUFABRIC_GPU_SHARING"
"""``off``: no watch for other processes on the run's GPUs (``bench.gpu_sharing``)."""
CPU_BIND_ENV = "GPUFABRIC_CPU_BIND"
"""``none`` (default), ``auto``, ``share`` or ``core``: the CPUs a direct-engine rank runs on."""
LAUNCH_LOOP_ENV = "GPUFABRIC_LAUNCH_LOOP"
LAUNCH_LOOPS = ("c", "python")
"""``python``: the direct engine times its batches with the Python loop, not the C one
(``engines.nccl.launch_loop``)."""
BUFFERS_ENV = "GPUFABRIC_BUFFERS"
BufferAllocator = Literal["cuda", "nccl"]
BUFFER_ALLOCATORS: tuple[BufferAllocator, ...] = ("cuda", "nccl")
"""How the direct engine allocates each collective's send and receive buffers: ``cuda`` (default,
``cudaMalloc``) or ``nccl`` (``ncclMemAlloc``, as nccl-tests 2.19 built against NCCL 2.19+ allocates its
own; ``engines.nccl.cuda.DeviceBuffer``)."""
PROBE_BUFFERS_ENV = "GPUFABRIC_PROBE_BUFFERS"
ProbeBufferLayout = Literal["distinct", "shared"]
PROBE_BUFFER_LAYOUTS: tuple[ProbeBufferLayout, ...] = ("distinct", "shared")
"""How train-bench's probes hold the step's collectives: ``distinct`` (default), a buffer per call as the
step's own DDP buckets and FSDP shards are, or ``shared`` by calls of equal shape (less memory: one
25 MB buffer serves every 25 MB bucket; ``train.timing.probe_buffers``)."""
WAITED_FOR_PROBE_ENV = "GPUFABRIC_WAITED_FOR_PROBE"
"""``1``/``0``: train-bench's ranks run (skip) the waited-for probe (``train.waited_for``: one rank
computing beside the step's calls while the others wait at them), recorded as ``Contention.waited_for``.
Unset: DDP runs it (its prediction takes the probe's rates), FSDP does not (``train.config``)."""
GLOO_DEVICES_ENV = "GPUFABRIC_GLOO_DEVICES"
"""How many times a gloo rank lists its interface (``tune --path socket``'s knob)."""
NO_METADATA_ENV = "GPUFABRIC_NO_METADATA"
"""Set: no cloud metadata service is asked (``hardware.cloud``)."""
CLOUD_METADATA_ENV = "GPUFABRIC_CLOUD_METADATA"
"""Set to 1: a benchmark's ranks ask the cloud metadata service too (``bench.node_facts``)."""
PIP_SPEC_ENV = "GPUFABRIC_PIP_SPEC"
"""What SkyPilot's ``setup`` pip-installs instead of this version of gpufabric."""

# Test-only switches: a run under one is marked as such in every output.
FAULT_ENV = "GPUFABRIC_FAULT"
NODE_OVERRIDE_ENV = "GPUFABRIC_NODE_ENV"
"""``node=I:NAME=VALUE,...``: variables set on one node of a certify run (``analysis.certify.node_env``)."""

STANDBY_FLAG = "--standby"
"""A rank program started with only this argument is a rank started before its plan (``launch.standby``):
it imports its modules (and makes its CUDA context), then reads its arguments and the rest of its
environment as one JSON line on its standard input (``bench.rank_process.receive_plan``)."""

# Lines a rank prints on stdout for its supervisor, each followed by one JSON object.
STAGE_TAG = "GPUFABRIC_STAGE "
PROGRESS_TAG = "GPUFABRIC_PROGRESS "

NCCL_DEBUG_FILE_ENV = "NCCL_DEBUG_FILE"
NCCL_LOG_DIR = "nccl"
"""The run directory's folder of NCCL's logs."""
NCCL_LOG_PATTERN = "nccl.%h.%p.log"
"""NCCL_DEBUG_FILE's file name: NCCL writes one file per process, ``%h`` the host name cut at its first
dot and ``%p`` the pid (NCCL's src/debug.cc)."""
DIAG_LOG = "nccl-diag.log"
"""Rank 0's "NCCL DIAG" lines (NCCL 2.31+ init diagnostics print to stdout), kept in NCCL_LOG_DIR."""

CONFIG_NAME = "config.json"
"""The run directory's sweep config, which the command writes and every rank reads (``--config``)."""
RUNS_ROOT = Path("runs")
"""Where gpufabric's own commands (bench, tune, train-bench, isolate, certify) put a fresh
``<timestamp>-<label>/`` when no run directory is given."""
TASK_RUNS_ROOT = "gpufabric-runs"
"""Where ``gpufabric launch`` runs a task (``./gpufabric-runs/<task id>``): apart from ``runs`` on purpose,
as a launched task is the user's own program, run from the user's project, where ``runs/`` is often the
program's own (torch.utils.tensorboard's ``SummaryWriter`` logs to ``runs/`` by default)."""
