"""The sweep on one rank: every collective, every size, both placements, into ``Row``s.

Called by ``gpufabric.engines.torch.rank`` once the process group is up. Every rank runs the same loop in the
same order (the collectives must match); rank 0 alone turns the numbers into rows and hands them to
``on_row`` (which streams them to disk). ``on_size`` runs before each size on every rank (stage
reports, hang/crash faults); ``slow`` and ``corrupt`` faults act on the workload here. ``--check``
finds the first wrong element of every rank; rank 0 records the first bad rank in the notes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import torch

from gpufabric.bench.config import BenchConfig
from gpufabric.bench.fault import Fault, slowed_launch
from gpufabric.bench.rows import measurement, note_first_wrong
from gpufabric.bench.semantics import layout
from gpufabric.bench.timing_notes import TimingNotes
from gpufabric.bench.traffic import CallCounter, SizeTraffic
from gpufabric.engines.torch import ops
from gpufabric.engines.torch.timing import BatchTimer
from gpufabric.results.model import Measurement, Row, Series

RowSink = Callable[[str, Row], None]
SizeHook = Callable[[str, int], None]


def run_collective(
    collective: str,
    config: BenchConfig,
    *,
    rank: int,
    world_size: int,
    device: torch.device,
    timer: BatchTimer,
    on_row: RowSink | None,
    notes: list[str],
    on_size: SizeHook | None = None,
    fault: Fault | None = None,
    traffic: SizeTraffic | None = None,
) -> Series:
    """One collective's sweep; returns the series (rows only on rank 0). With ``traffic``, every host's
    NIC counters are read around each size and rank 0's rows carry what each NIC moved."""
    sizes = config.sizes()
    shapes = [layout(collective, size, config.wordsize, world_size) for size in sizes]
    skipped = [s for s, shape in zip(sizes, shapes, strict=True) if shape.param_count == 0]
    if skipped and rank == 0:
        notes.append(
            f"{collective}: skipped {len(skipped)} size(s) below one {config.dtype} per rank "
            f"({', '.join(str(s) for s in skipped)} B); nccl-tests prints them as 0-byte rows"
        )
    shapes = [shape for shape in shapes if shape.param_count > 0]
    series = Series(collective=collective, nranks=world_size)
    if not shapes:
        return series
    wordsize = config.wordsize
    buffers = ops.Buffers(max(max(s.send_count, s.recv_count) for s in shapes) * wordsize, device)
    redop, root = config.redop_for(collective), config.root_for(collective)
    op_name = config.op if redop != "none" else "sum"
    wrong_total = 0
    busbw_values: list[float] = []
    corrupt = fault is not None and fault.kind == "corrupt" and fault.rank == rank
    timing_log = TimingNotes(collective, config)
    for shape in shapes:
        if on_size is not None:
            on_size(collective, shape.size_bytes)
        placed: dict[bool, Measurement | None] = {False: None, True: None}
        launches = CallCounter()
        if traffic is not None:
            traffic.begin()
        for in_place in (False, True):
            if not in_place and collective in ops.IN_PLACE_ONLY:
                continue
            work = ops.build(
                shape,
                in_place=in_place,
                buffers=buffers,
                dtype=config.dtype,
                op=op_name,
                root=max(root, 0),
                rank=rank,
            )
            if device.type != "cuda":  # a gloo call blocks until its peers are in: waiting, not own time
                work = dataclasses.replace(work, launch=timer.waits.timed(work.launch))
            slow = slowed_launch(fault, rank, work.launch, timer.waits.timed(_synchronizer(device)))
            if slow is not None:
                work = dataclasses.replace(work, launch=slow, synchronizes=True)
            work = dataclasses.replace(work, launch=launches.wrap(work.launch))
            samples = timer.measure(work)
            wrong: int | None = None
            if config.check:
                local = ops.check(
                    work, dtype=config.dtype, op=op_name, root=max(root, 0), rank=rank, corrupt=corrupt
                )
                if local is not None:
                    table = timer.gather_check(local.wrong, local.index, local.expected, local.got)
                    wrong = int(sum(row[0] for row in table))
                    if wrong and rank == 0:
                        note_first_wrong(notes, collective, shape.size_bytes, in_place, table)
            placed[in_place] = measurement(shape, samples, wrong, config)
            if rank == 0:
                timing_log.add(shape.size_bytes, in_place, samples)
        # A CUDA graph replays launches the host never sees: then the calls are unknown.
        if traffic is not None:
            _synchronizer(device)()  # this rank's last call of the size is over before the line-up
        moved = traffic.finish(shape, None if config.graph else launches.calls) if traffic else []
        if rank != 0:
            continue
        row = Row(
            size_bytes=shape.size_bytes,
            count=shape.count,
            dtype=config.dtype,
            redop=redop,
            root=root,
            out_of_place=placed[False],
            in_place=placed[True],
            traffic=moved,
        )
        for m in (row.out_of_place, row.in_place):
            if m is not None:
                busbw_values.append(m.busbw_gbs)
                wrong_total += m.wrong or 0
        series.rows.append(row)
        if on_row is not None:
            on_row(collective, row)
    if rank == 0:
        notes.extend(timing_log.notes())
        series.avg_busbw_gbs = sum(busbw_values) / len(busbw_values) if busbw_values else None
        series.wrong_total = wrong_total if config.check else None
    del buffers
    if device.type == "cuda":
        torch.cuda.empty_cache()
    return series


def _synchronizer(device: torch.device) -> Callable[[], None]:
    if device.type == "cuda":
        return lambda: torch.cuda.synchronize(device)
    return lambda: None
