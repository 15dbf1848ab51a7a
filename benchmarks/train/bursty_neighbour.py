"""A bursty neighbour on every GPU: the disturbed machine of docs/train-bench.md finding 37, made on purpose.

One process per GPU runs bf16 matmuls in bursts of random length with random idle gaps between them,
each GPU on its own random clock, so the ranks of a training job beside it are slowed at different
moments: what a synced step pays (it waits for every rank at each bucket) and the twin, one rank's
steps, does not. A constant load would slow one rank in every step alike (the twin's slowest rank
already holds that); bursts on independent clocks are the case finding 38's rank-wait term is for.

    python3 benchmarks/train/bursty_neighbour.py --busy-ms 10 60 --idle-ms 40 200 &
    ... the training job ...
    kill %1   # each GPU's process prints one line: its bursts and busy share

Runs until SIGTERM (or ``--seconds``). Needs torch with CUDA; nothing here is part of the package.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import random
import signal
import sys
import time


def neighbour(gpu: int, busy_ms: tuple[float, float], idle_ms: tuple[float, float], seconds: float) -> None:
    import torch

    stop = False

    def on_term(_signum: int, _frame: object) -> None:
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, on_term)
    torch.cuda.set_device(gpu)
    # 4096^3 bf16: about 0.2 ms on an H100/H200, so a burst ends within a fraction of a millisecond of
    # its drawn length.
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    torch.cuda.synchronize()
    rng = random.Random(1000 + gpu)  # each GPU its own clock, the same from run to run
    start = time.monotonic()
    busy_s = 0.0
    bursts = 0
    while not stop and time.monotonic() - start < seconds:
        t0 = time.monotonic()
        end = t0 + rng.uniform(*busy_ms) / 1e3
        while time.monotonic() < end and not stop:
            a @ b
            torch.cuda.synchronize()
        busy_s += time.monotonic() - t0
        bursts += 1
        time.sleep(rng.uniform(*idle_ms) / 1e3)
    wall = time.monotonic() - start
    share = 100 * busy_s / max(wall, 1e-9)
    print(
        f"neighbour GPU {gpu}: {bursts} bursts of {busy_ms[0]:g}-{busy_ms[1]:g} ms, idle "
        f"{idle_ms[0]:g}-{idle_ms[1]:g} ms, busy {busy_s:.1f} s of {wall:.1f} s ({share:.0f}%)",
        flush=True,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--busy-ms", nargs=2, type=float, default=(10.0, 60.0), metavar=("MIN", "MAX"))
    parser.add_argument("--idle-ms", nargs=2, type=float, default=(40.0, 200.0), metavar=("MIN", "MAX"))
    parser.add_argument("--seconds", type=float, default=3600.0, help="stop after this (default: SIGTERM)")
    parser.add_argument("--gpus", type=int, default=0, help="how many GPUs (default: every one torch sees)")
    args = parser.parse_args()
    import torch

    count = args.gpus or torch.cuda.device_count()
    if count < 1:
        print("bursty_neighbour: no CUDA GPU here", file=sys.stderr)
        return 2
    ctx = mp.get_context("spawn")
    workers = [
        ctx.Process(target=neighbour, args=(gpu, tuple(args.busy_ms), tuple(args.idle_ms), args.seconds))
        for gpu in range(count)
    ]
    for worker in workers:
        worker.start()

    def forward(_signum: int, _frame: object) -> None:
        for worker in workers:
            if worker.pid is not None and worker.is_alive():
                worker.terminate()

    signal.signal(signal.SIGTERM, forward)
    print(f"ready: {count} GPUs", flush=True)
    for worker in workers:
        worker.join()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
