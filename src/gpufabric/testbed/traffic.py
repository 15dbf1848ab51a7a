"""A rank that moves a known number of bytes: ``calls`` collectives of ``size`` bytes over gloo, nothing
else, so the NIC counters read around its job can be held against ``counters.must_move``.

    python -m gpufabric.testbed.traffic --collective alltoall --size 4194304 --calls 5

Run on every rank of a bed (``traffic_program`` builds the ``RankProgram``); reads its rank and the
rendezvous as the bench engine does (``bench.identity``: torchrun's variables or OpenMPI's) and binds
gloo to ``GLOO_SOCKET_IFNAME``. The bench engine is not used here: its warm-up, check pass and
adaptive batches make its byte count a sum of settings, where this program's is one product.
"""

from __future__ import annotations

import argparse
import datetime
import os
import sys
from pathlib import Path

from gpufabric.launch.base import RankProgram

COLLECTIVES = ("alltoall", "all_reduce")
INIT_TIMEOUT_S = 60


def traffic_program(collective: str, size_bytes: int, calls: int, nranks: int, workdir: Path) -> RankProgram:
    argv = [sys.executable, "-m", "gpufabric.testbed.traffic", "--collective", collective,
            "--size", str(size_bytes), "--calls", str(calls)]  # fmt: skip
    return RankProgram(argv=argv, nranks=nranks, workdir=workdir, label="testbed-traffic")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gpufabric.testbed.traffic")
    parser.add_argument("--collective", choices=COLLECTIVES, required=True)
    parser.add_argument("--size", type=int, required=True, help="bytes: alltoall's send buffer, all_reduce's")
    parser.add_argument("--calls", type=int, required=True)
    args = parser.parse_args(argv)
    import torch
    import torch.distributed as dist

    from gpufabric.bench.identity import rank_identity

    # torchrun's variables (local launcher) or OpenMPI's (mpirun): the bench engine's one reader.
    me = rank_identity(os.environ)
    dist.init_process_group(
        "gloo", init_method=me.init_method, rank=me.rank,
        world_size=me.world_size, timeout=datetime.timedelta(seconds=INIT_TIMEOUT_S),
    )  # fmt: skip
    world = dist.get_world_size()
    elements = args.size // 4 // world * world  # float32, split evenly for alltoall
    send = torch.ones(elements, dtype=torch.float32)
    receive = torch.empty_like(send)
    for _ in range(args.calls):
        if args.collective == "alltoall":
            dist.all_to_all_single(receive, send)
        else:
            dist.all_reduce(send)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
