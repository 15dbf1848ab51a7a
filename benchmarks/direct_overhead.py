"""Per-call cost of NCCL through nccl4py's low-level binding: 1 rank, in-place all_reduce (host-bound).

NCCL does no device work for an in-place all_reduce on one rank, so the time per call is the host's:
the binding plus NCCL's enqueue. Prints one JSON line. Run on a GPU host with the ``gpu`` extra:

    python benchmarks/direct_overhead.py --calls 20000 --size 8
"""

from __future__ import annotations

import argparse
import json
import time

from gpufabric.engines.nccl import cuda, library


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--size", type=int, default=8)
    args = parser.parse_args()
    lib = library.load()
    nccl = library.bindings()
    cuda.use_device(0)
    uid = nccl.get_unique_id()
    comm = nccl.comm_init_rank(1, uid, 0)
    stream = cuda.Stream()
    buf = cuda.DeviceBuffer(max(args.size, 4))
    out = cuda.DeviceBuffer(max(args.size, 4))
    count = max(args.size // 4, 1)
    f32, total = int(nccl.DataType.Float32), int(nccl.RedOp.Sum)
    result = {"nccl": lib.version, "library": lib.path, "size": args.size, "calls": args.calls}
    for label, send, recv in (("in_place", buf.ptr, buf.ptr), ("out_of_place", buf.ptr, out.ptr)):
        for _ in range(200):
            nccl.all_reduce(send, recv, count, f32, total, comm, stream.handle)
        stream.synchronize()
        start = time.perf_counter()
        for _ in range(args.calls):
            nccl.all_reduce(send, recv, count, f32, total, comm, stream.handle)
        host = time.perf_counter() - start
        stream.synchronize()
        wall = time.perf_counter() - start
        result[f"{label}_host_us_per_call"] = round(host / args.calls * 1e6, 3)
        result[f"{label}_wall_us_per_call"] = round(wall / args.calls * 1e6, 3)
    nccl.comm_destroy(comm)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
