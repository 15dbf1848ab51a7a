"""A plain torch.distributed all_reduce loop, timed two ways, as a cross-check of the engine on a GPU host.

No gpufabric code runs in the ranks: one process per GPU (as the engine), ``init_process_group`` with
NCCL, then per size: 5 warm-up iterations, and ``--repeats`` times: a barrier (a 1-element all_reduce
and a device sync, as nccl-tests' ``Barrier``), then ``--iters`` back-to-back all_reduces timed both
by CUDA events on the stream and by the host clock from before the first launch to after the device
sync (nccl-tests' own method). Times are averaged over ranks; the repeats' median is reported.

It also times each rank's start-up phases (python start, ``import torch``, CUDA init, NCCL init, first
collective), to show where a benchmark's wall time goes before its first size.

Usage: python3 benchmarks/plain_loop.py [--sizes 4M,16M,64M] [--iters 100] [--repeats 5] [--ranks N]
``--cpu`` runs the same on gloo (event columns then repeat the host clock), to time start-up phases
anywhere. Prints one line ``PLAIN_JSON {...}`` (rank 0's summary) and exits 0. Set NCCL_* in the environment
(e.g. NCCL_CUMEM_ENABLE=0) to compare transports.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from typing import Any

TAG = "PLAIN_JSON "
_T0_ENV = "PLAIN_LOOP_T0"


def _parse_size(text: str) -> int:
    text = text.strip().upper().removesuffix("B")
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
    return int(float(text.rstrip("KMG")) * scale)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def rank_main(args: argparse.Namespace) -> int:
    started = time.time()
    import torch  # timed on purpose: import cost is part of what this script reports
    import torch.distributed as dist

    t_torch = time.time()
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    on_gpu = not args.cpu
    device = torch.device("cuda", int(os.environ["LOCAL_RANK"])) if on_gpu else torch.device("cpu")

    def sync() -> None:
        if on_gpu:
            torch.cuda.synchronize(device)

    if on_gpu:
        torch.cuda.set_device(device)
    torch.zeros(1, device=device)
    sync()
    t_cuda = time.time()
    if on_gpu:
        dist.init_process_group("nccl", rank=rank, world_size=world, device_id=device)
    else:
        dist.init_process_group("gloo", rank=rank, world_size=world)
    t_init = time.time()
    tiny = torch.zeros(1, device=device)
    dist.all_reduce(tiny)
    sync()
    t_first = time.time()

    def barrier() -> None:
        dist.all_reduce(tiny)
        sync()

    def rank_avg(value: float) -> float:
        t = torch.tensor([value], dtype=torch.float64, device=device)
        dist.all_reduce(t)
        return float(t.item()) / world

    rows = []
    for size in [_parse_size(s) for s in args.sizes.split(",")]:
        x = torch.ones(size // 4, dtype=torch.float32, device=device)
        for _ in range(5):
            dist.all_reduce(x)
        sync()
        event_us, host_us = [], []
        for _ in range(args.repeats):
            cuda: Any = torch.cuda  # Event is untyped in torch's stubs
            start = cuda.Event(enable_timing=True) if on_gpu else None
            end = cuda.Event(enable_timing=True) if on_gpu else None
            barrier()
            host_start = time.perf_counter()
            if start is not None:
                start.record()
            for _ in range(args.iters):
                dist.all_reduce(x)
            if end is not None:
                end.record()
            sync()
            host = (time.perf_counter() - host_start) / args.iters
            device_us = start.elapsed_time(end) * 1e3 / args.iters if start is not None else host * 1e6
            event_us.append(rank_avg(device_us))
            host_us.append(rank_avg(host * 1e6))
        rows.append(
            {
                "size_bytes": size,
                "event_us": statistics.median(event_us),
                "host_us": statistics.median(host_us),
                "event_samples_us": event_us,
                "host_samples_us": host_us,
                "busbw_event_gbs": size
                / (statistics.median(event_us) * 1e-6)
                / 1e9
                * 2
                * (world - 1)
                / world,
                "busbw_host_gbs": size / (statistics.median(host_us) * 1e-6) / 1e9 * 2 * (world - 1) / world,
            }
        )
        del x
    t_loop = time.time()
    spawned = float(os.environ.get(_T0_ENV, started))
    phases = {
        "python_start_s": started - spawned,
        "import_torch_s": t_torch - started,
        "cuda_init_s": t_cuda - t_torch,
        "nccl_init_s": t_init - t_cuda,
        "first_collective_s": t_first - t_init,
        "loop_s": t_loop - t_first,
    }
    gathered: list[Any] = [None] * world
    dist.all_gather_object(gathered, phases)
    dist.destroy_process_group()
    if rank == 0:
        worst = {k: max(g[k] for g in gathered) for k in phases}
        worst["destroy_s"] = time.time() - t_loop
        env = {k: v for k, v in os.environ.items() if k.startswith("NCCL_") and "DEBUG" not in k}
        summary = {"world_size": world, "iters": args.iters, "repeats": args.repeats, "env": env}
        summary.update({"rows": rows, "phases_max_over_ranks": worst})
        print(TAG + json.dumps(summary), flush=True)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="4M,16M,64M")
    parser.add_argument("--iters", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--ranks", type=int, default=0, help="default: every visible GPU")
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--cpu", action="store_true", help="gloo on CPU (start-up phases on any host)")
    args = parser.parse_args()
    if "RANK" in os.environ:
        return rank_main(args)
    ranks = args.ranks
    if ranks <= 0 and args.cpu:
        ranks = 4
    if ranks <= 0:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30, check=False)
        ranks = sum(1 for line in out.stdout.splitlines() if line.startswith("GPU "))
    port = str(_free_port())
    procs = []
    for rank in range(ranks):
        env = {**os.environ, "RANK": str(rank), "WORLD_SIZE": str(ranks), "LOCAL_RANK": str(rank)}
        env.update({"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": port, _T0_ENV: repr(time.time())})
        procs.append(
            subprocess.Popen(
                [sys.executable, __file__, *sys.argv[1:]],
                env=env,
                stdout=subprocess.PIPE if rank == 0 else subprocess.DEVNULL,
                text=True,
            )
        )
    try:
        output, _ = procs[0].communicate(timeout=args.timeout)
        codes = [p.wait(timeout=30) for p in procs]
    except subprocess.TimeoutExpired:
        for p in procs:
            p.kill()
        print(f"plain_loop: no result within {args.timeout:g}s; ranks stopped", file=sys.stderr)
        return 1
    for line in output.splitlines():
        if line.startswith(TAG):
            print(line, flush=True)
    return 0 if all(c == 0 for c in codes) else 1


if __name__ == "__main__":
    sys.exit(main())
