"""RAS output built from NCCL's own printf formats (src/ras/client_support.cc, tag v2.28.9-1; line numbers
cited), for the states the user guide shows no full example of: a job with one process stopped, in text and
in 2.28.9's JSON. Not a capture: the GPU script (benchmarks/gpu.sh nccl_native) captures the real thing,
which then sits beside these in tests/fixtures/nccl_native."""

# ruff: noqa: UP031  -- printf-style on purpose: each line is NCCL's C format, kept comparable

from __future__ import annotations

FUNCS = ("Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce")  # ncclFuncToString order


def text_stopped_2289(*, host: str, pids: list[int], stopped: int, comm_hash: int) -> str:
    """A 1-node, len(pids)-process job whose process ``stopped`` (an index) sent nothing."""
    n = len(pids)
    out = "NCCL version 2.28.9+cuda12.9 compiled with CUDA 12.9\n"  # line 542
    out += "CUDA runtime version 12090, driver version 12080\n\n"  # line 544
    out += "Job summary\n===========\n\n"  # line 599
    out += "  Nodes  Processes         GPUs  Processes     GPUs\n"  # lines 603-605
    out += "(total)   per node  per process    (total)  (total)\n"
    out += "%7d  %9d  %11d  %9d  %7d\n" % (1, n, 1, n, n)
    out += "\nCommunicators..."  # line 778
    out += " (%.3fs)\n=============\n\n" % 5.012  # line 1020
    out += "Group     Comms     Nodes     Ranks     Ranks     Ranks    Status  Errors\n"  # line 1174
    out += "    #  in group  per comm  per node  per comm  in group\n"
    out += "%5d  %8d  %8d  %8s  %8d  %8d  %8s  %6s\n" % (
        0,
        1,
        1,
        str(n - 1),
        n,
        n - 1,
        "RUNNING",
        "INCOMPLETE",
    )
    out += "\nErrors\n======\n\n"  # line 1225
    out += "INCOMPLETE\n  Missing communicator data from %d job process%s\n" % (1, "")  # line 1229
    out += "  Process %d on node %s managing GPU%s %s\n" % (pids[stopped], host, "", str(stopped))  # 1280
    out += "\n"
    out += "#%d-%d (%016x) INCOMPLETE\n  Missing communicator data from %d rank%s\n" % (
        0,
        0,
        comm_hash,
        1,
        "",
    )
    out += "  Rank %d -- GPU %s managed by process %d on node %s\n" % (
        stopped,
        str(stopped),
        pids[stopped],
        host,
    )
    out += "\n"
    out += "Warnings\n========\n\n"  # line 1396
    out += "TIMEOUT\n  Encountered %d communication timeout%s while gathering communicator data\n\n" % (1, "")
    return out


def json_stopped_2289(*, host: str, pids: list[int], stopped: int, comm_hash: int, counts: int) -> str:
    """The same job in 2.28.9's JSON, with jsonWriteMissingRank's missing comma (line 1963)."""
    n = len(pids)
    out = "{\n"  # jsonWriteHeader, lines 1892-1898
    out += '  "nccl_version": "%s",\n' % "2.28.9+cuda12.9"
    out += '  "cuda_runtime_version": %d,\n' % 12090
    out += '  "cuda_driver_version": %d,\n' % 12080
    out += '  "timestamp": "%s",\n' % "2026-11-27 06:00:00"
    out += '  "communicators_count": %d,\n' % 1
    out += '  "communicators": [\n'
    out += "    {\n"  # jsonStartCommunicator, lines 1905-1911
    out += '      "hash": "0x%x",\n' % comm_hash
    out += '      "secondary_hash": "0x%x:0x%x",\n' % (0x1234, 0x5678)
    out += '      "size": %d,\n' % n
    out += '      "ranks_count": %d,\n' % (n - 1)
    out += '      "missing_ranks_count": %d,\n' % 1
    out += '      "ranks": [\n'
    first = True
    for rank in range(n):
        if rank == stopped:
            continue
        if not first:
            out += ",\n"  # jsonWriteRankData, lines 1916-1940
        first = False
        out += "        {\n"
        out += '          "rank": %d,\n' % rank
        out += '          "host": "%s",\n' % host
        out += '          "pid": %d,\n' % pids[rank]
        out += '          "cuda_dev": %d,\n' % rank
        out += '          "nvml_dev": %d,\n' % rank
        out += '          "status": {\n'
        out += '            "init_state": %d,\n' % 0
        out += '            "async_error": %d,\n' % 0
        out += '            "finalize_called": %s,\n' % "false"
        out += '            "destroy_flag": %s,\n' % "false"
        out += '            "abort_flag": %s\n' % "false"
        out += "          },\n"
        out += '          "collective_counts": {\n'
        for op, name in enumerate(FUNCS):
            out += '            "%s": %d' % (name, counts if name == "AllReduce" else 0)
            out += "," if op < len(FUNCS) - 1 else ""
            out += "\n"
        out += "          }\n"
        out += "        }"
    out += "\n      ],\n"  # jsonStartMissingRanks, lines 1944-1946
    out += '      "missing_ranks": [\n'
    out += "        {\n"  # jsonWriteMissingRank, lines 1952-1968
    out += '          "rank": %d,\n' % stopped
    out += '          "host": "%s",\n' % host
    out += '          "pid": %d,\n' % pids[stopped]
    out += '          "cuda_dev": %d,\n' % stopped
    out += '          "nvml_dev": %d\n' % stopped  # line 1963: no comma
    out += '          "status": {\n'
    out += '            "unresponsive": %s,\n' % "true"
    out += '            "considered_dead": %s\n' % "false"
    out += "          }\n"
    out += "        }"
    out += "\n      ]\n    }"  # jsonEndCommunicator, lines 1971-1972
    out += "\n  ],\n"  # jsonWriteFooter, lines 1976-1981
    out += '  "ras": {\n'
    out += '    "collection_time_sec": %.3f,\n' % 5.004
    out += '    "timeouts_count": %d\n' % 1
    out += "  }\n}\n"
    return out
