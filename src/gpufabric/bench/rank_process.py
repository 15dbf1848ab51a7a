"""What every rank process shares (both engines' ranks, ``engines.nccl.rank`` and ``engines.torch.rank``,
``engines.torch.group_rank``, ``train.rank``): the backend and device it runs on, the watched join of the
world, the lines and files the parent reads (progress, the rank's own NCCL log), and the exit protocol.

The exit protocol: a rank that fails writes ``<run_dir>/errors/rank<N>.json`` (kind + one-line message),
prints ``Error: ...`` on stderr and exits 2 for a usage error, 1 for any other failure; the parent names
the rank and the reason from those. torch is imported inside the functions, so importing this module
stays cheap. A rank started before its plan (``--standby``: ``launch.standby``) receives it here
(``receive_plan``) before it reads its config.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
import time
import traceback
from collections.abc import Callable, Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any, BinaryIO, NoReturn

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gpufabric.bench.config import BenchConfig
from gpufabric.bench.identity import RankIdentity, rank_identity
from gpufabric.bench.rundir import PROGRESS_TAG, write_error
from gpufabric.bench.stages import StageReporter
from gpufabric.boundary_names import NCCL_DEBUG_FILE_ENV, STANDBY_FLAG
from gpufabric.errors import GpufabricError, OutputError, UsageError
from gpufabric.outputs import FULL_DISK_ERRNOS, full_disk_error

EXIT_USAGE = 2
EXIT_FAILURE = 1

_main_began: list[float] = []  # when this process's main began: its interpreter and imports were done
_plan_received: list[float] = []  # a standby: when its plan arrived


def main_began() -> float | None:
    """When this rank's ``bench_rank_main`` began (seconds since the epoch), a standby's once its engine's
    imports were done too: ``RunPhases.imports_done``."""
    return _main_began[0] if _main_began else None


def plan_received() -> float | None:
    """When this rank, started before its plan, received it: ``RunPhases.plan_received``."""
    return _plan_received[0] if _plan_received else None


class StandbyPlan(BaseModel):
    """What a rank started before its plan receives on its standard input (``launch.standby``): its
    arguments, and the variables its launcher sets or unsets (only those read after this point)."""

    model_config = ConfigDict(extra="forbid", hide_input_in_errors=True)  # variables may hold secrets

    args: list[str]
    variables: dict[str, str] = Field(default_factory=dict, description="set, replacing the standby's")
    removed: list[str] = Field(default_factory=list, description="unset")


def receive_plan(stdin: BinaryIO) -> list[str] | None:
    """A standby's plan, applied: the variables set and unset, standard input then ``/dev/null`` as a
    rank started with its plan has it. Returns the arguments, or None at the end of input without a
    plan (the command stopped before it had one: nothing to report)."""
    line = stdin.readline()
    if not line.strip():
        return None
    plan = StandbyPlan.model_validate_json(line)
    for name in plan.removed:
        os.environ.pop(name, None)
    os.environ.update(plan.variables)
    with contextlib.suppress(OSError):
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
    _plan_received.append(time.time())
    return plan.args


def choose_backend(config: BenchConfig, cuda_devices: int) -> tuple[str, str]:
    """(backend, device type): nccl on CUDA when GPUs exist, else gloo on CPU, unless told otherwise."""
    if config.backend:
        backend = config.backend
        if backend == "nccl":
            return backend, "cuda"
        if backend == "gloo":
            return backend, "cuda" if config.device == "cuda" else "cpu"
        device = {"hccl": "hpu", "xccl": "xpu"}.get(backend, "cpu")
        return backend, config.device if config.device != "auto" else device
    if config.device != "cpu" and cuda_devices > 0:
        return "nccl", "cuda"
    if config.device == "cuda":
        raise UsageError(
            "--device cuda: no CUDA GPU is visible to this rank; drop it to run on CPU with gloo"
        )
    return "gloo", "cpu"


def rank_device(config: BenchConfig, identity: RankIdentity) -> tuple[str, Any]:
    """(backend, torch device) of this rank; a CUDA device is made current (one GPU per local rank)."""
    import torch

    cuda_devices = torch.cuda.device_count() if torch.cuda.is_available() else 0
    backend, device_type = choose_backend(config, cuda_devices)
    if device_type != "cuda":
        return backend, torch.device(device_type)
    if cuda_devices == 0:
        raise UsageError("--backend nccl: no CUDA GPU is visible to this rank; use --backend gloo")
    device = torch.device("cuda", identity.local_rank % cuda_devices)
    torch.cuda.set_device(device)
    return backend, device


def join_world(
    config: BenchConfig, identity: RankIdentity, backend: str, device: Any, stages: StageReporter
) -> None:
    """Rendezvous (every rank reaches the TCP store), then communicator init, as two watched stages."""
    import torch.distributed as dist

    timeout = timedelta(seconds=config.init_timeout_s)
    kwargs: dict[str, Any] = {}
    if device.type == "cuda":
        kwargs["device_id"] = device  # eager NCCL communicator init, bounded by the timeout below
    stages.enter("rendezvous")
    # torch's own rendezvous (as init_process_group would run it: torchrun's agent store, multi-tenant
    # TCPStore), done here so that "every rank arrived" is a stage: rank 0 returns once all connected.
    c10d: Any = dist  # rendezvous and PrefixStore are public at runtime but not re-exported in the stubs
    store, _, _ = next(
        c10d.rendezvous(identity.init_method, identity.rank, identity.world_size, timeout=timeout)
    )
    store.set_timeout(timeout)
    kwargs["store"] = c10d.PrefixStore("default_pg", store)
    stages.enter("init")
    if backend == "gloo":  # a tune's candidate: this rank's interface listed K times (bench.tune_gloo)
        from gpufabric.bench.tune_gloo import gloo_interfaces

        listed = gloo_interfaces(os.environ)
        if listed is not None:
            os.environ["GLOO_SOCKET_IFNAME"] = listed
    dist.init_process_group(
        backend=backend, rank=identity.rank, world_size=identity.world_size, timeout=timeout, **kwargs
    )


def announce_progress(event: dict[str, Any]) -> None:
    """A line the launcher's output sink picks out of rank 0's stdout to drive the progress bar."""
    print(PROGRESS_TAG + json.dumps(event, separators=(",", ":")), flush=True)


def announce_phase(name: str) -> None:
    """Rank 0's stamp of an end phase it reaches after its result is written (``RunPhases.teardown``,
    ``destroyed``): on the progress line, which the parent adds to the result."""
    announce_progress({"phase": name, "at": time.time()})


def own_nccl_log(environ: Mapping[str, str]) -> str | None:
    """The file NCCL_DEBUG_FILE names for this process.

    NCCL expands ``%h`` to the host name cut at its first dot and ``%p`` to the pid (src/debug.cc).
    """
    pattern = environ.get(NCCL_DEBUG_FILE_ENV)
    if not pattern:
        return None
    host = socket.gethostname().split(".")[0]
    return pattern.replace("%h", host).replace("%p", str(os.getpid()))


def run_as_rank(run_dir: Path, run: Callable[[RankIdentity], int]) -> int:
    """``run`` with this process's identity; any failure ends in the exit protocol (module docstring)."""
    try:
        identity = rank_identity(os.environ)
    except GpufabricError as exc:
        return _failed(run_dir, -1, "usage", str(exc), EXIT_USAGE)
    try:
        return run(identity)
    except UsageError as exc:
        return _failed(run_dir, identity.rank, "usage", str(exc), EXIT_USAGE)
    except OutputError as exc:
        return _failed(run_dir, identity.rank, "output", str(exc), EXIT_USAGE)
    except OSError as exc:
        if exc.errno not in FULL_DISK_ERRNOS:
            raise
        error = full_disk_error(run_dir, exc, fix="free space there or choose another --run-dir")
        return _failed(run_dir, identity.rank, "output", str(error), EXIT_USAGE)
    except GpufabricError as exc:
        return _failed(run_dir, identity.rank, "failure", str(exc), EXIT_FAILURE)
    except Exception as exc:  # keep the traceback in the rank's output, one line in the error file
        traceback.print_exc()
        message = " ".join(f"{type(exc).__name__}: {exc}".split())[:400]
        write_error(run_dir, identity.rank, "failure", message)
        return EXIT_FAILURE


def _failed(run_dir: Path, rank: int, kind: str, message: str, code: int) -> int:
    write_error(run_dir, rank, kind, message)
    print(f"Error: {message}", file=sys.stderr, flush=True)
    return code


def bench_rank_main(
    prog: str,
    run_rank: Callable[[BenchConfig, RankIdentity], int],
    argv: list[str] | None = None,
    standby_imports: Callable[[], None] | None = None,
) -> int:
    """The command line of a benchmark rank program (``python -m <prog> --config <run_dir>/config.json``):
    read the config every rank shares, then ``run_rank`` under the exit protocol. Both engines' ranks.

    Started before its plan (``python -m <prog> --standby``, ``launch.standby``), the rank first runs
    ``standby_imports`` (what its engine imports only once it runs: torch), then waits for its arguments
    and the rest of its environment on its standard input."""
    import argparse

    given = sys.argv[1:] if argv is None else argv
    if given[:1] == [STANDBY_FLAG]:  # what follows it only shows ps which run it is for
        if standby_imports is not None:
            standby_imports()
        _main_began.append(time.time())
        try:
            received = receive_plan(sys.stdin.buffer)
        except ValidationError as exc:  # our own parent wrote it: a mismatch of versions, said in one line
            print(
                f"gpufabric rank: the plan from its command could not be read ({exc.error_count()} "
                "error(s)); run gpufabric and its ranks from one installation",
                file=sys.stderr,
            )
            exit_rank(2)
        if received is None:
            exit_rank(0)
        given = received
    else:
        _main_began.append(time.time())
    parser = argparse.ArgumentParser(prog=f"python -m {prog}")
    parser.add_argument("--config", required=True, type=Path, help="<run_dir>/config.json")
    args = parser.parse_args(given)
    config = BenchConfig.model_validate_json(args.config.read_text(encoding="utf-8"))
    return run_as_rank(config.run_dir, lambda identity: run_rank(config, identity))


def exit_rank(code: int) -> NoReturn:
    """End a rank process (its ``__main__``) once ``main`` returned: flush what it printed, then leave
    without the interpreter's teardown, which has nothing left to do (the result file is written and
    fsynced, the communicator destroyed, NCCL's log flushed line by line: src/debug.cc) and took a gloo
    rank 1.5 s after its last line on the CPU box, torch's teardown (issue 36)."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed or broken pipe: nothing to keep
            stream.flush()
    os._exit(code)
