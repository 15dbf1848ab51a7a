"""One collective's sweep on one rank of the direct engine: every size, both placements, into ``Row``s.

The torch engine's ``engines.torch.sweep`` in NCCL's own terms: layouts are nccl-tests' (with its 16-byte
per-rank trim), both the out-of-place and the in-place column are measured for every collective (NCCL
has out-of-place all_reduce, broadcast and reduce; torch.distributed does not), ``--check`` runs after the
timed batches of each placement, and rank 0 turns the numbers into rows and streams them. With
``traffic``, every host's NIC counters are read around each size (``bench.traffic``, as the torch engine
does) and rank 0's rows carry what each NIC moved.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gpufabric.bench.batches import Samples
from gpufabric.bench.config import BenchConfig
from gpufabric.bench.fault import Fault, slowed_launch
from gpufabric.bench.gpu_sharing import SharingWatch, sharing_note
from gpufabric.bench.rows import measurement, note_first_wrong
from gpufabric.bench.semantics import layout
from gpufabric.bench.timing_notes import TimingNotes
from gpufabric.bench.traffic import SizeTraffic
from gpufabric.boundary_names import BufferAllocator
from gpufabric.engines.nccl import check as checking
from gpufabric.engines.nccl import collectives
from gpufabric.engines.nccl.control import ControlPlane
from gpufabric.engines.nccl.cuda import Stream
from gpufabric.engines.nccl.device_check import DeviceChecker
from gpufabric.engines.nccl.library import NcclLibrary, require_version
from gpufabric.engines.nccl.timer import DirectTimer
from gpufabric.errors import GpufabricError, UsageError
from gpufabric.results.model import Measurement, Row, Series


@dataclass
class SweepContext:
    """What every collective's sweep on this rank shares."""

    nccl: Any
    comm: Any
    stream: Stream
    control: ControlPlane
    timer: DirectTimer
    library: NcclLibrary
    rank: int
    world_size: int
    fault: Fault | None
    on_size: Callable[[str, int], None] | None
    on_row: Callable[[str, Row], None] | None
    checker: DeviceChecker | None = None
    """``--check`` on the GPU; None: on the host."""
    traffic: SizeTraffic | None = None
    sharing: SharingWatch | None = None
    """This host's watch for other processes on the run's GPUs (every rank has one; the host's lowest
    rank's looks)."""
    buffers: BufferAllocator = "cuda"
    """How each collective's send and receive buffers are allocated (``GPUFABRIC_BUFFERS``)."""

    @property
    def version(self) -> tuple[int, ...]:
        return tuple(int(p) for p in self.library.version.split("."))


def check_library(config: BenchConfig, library: NcclLibrary) -> None:
    """Refuse what this NCCL cannot do before any size runs."""
    if config.dtype in ("f8e4m3", "f8e5m2"):
        require_version(library, collectives.FP8_SINCE, f"--dtype {config.dtype}")
    if config.dtype == "bfloat16":
        require_version(library, collectives.BF16_SINCE, "--dtype bfloat16")
    if config.op == "avg":
        require_version(library, collectives.AVG_SINCE, "--op avg")


def run_collective(collective: str, config: BenchConfig, ctx: SweepContext, notes: list[str]) -> Series:
    """One collective's sweep; returns the series (rows only on rank 0)."""
    sizes = config.sizes()
    shapes = [layout(collective, size, config.wordsize, ctx.world_size) for size in sizes]
    skipped = [s for s, shape in zip(sizes, shapes, strict=True) if shape.param_count == 0]
    if skipped and ctx.rank == 0:
        notes.append(
            f"{collective}: skipped {len(skipped)} size(s) below 16 bytes per rank "
            f"({', '.join(str(s) for s in skipped)} B); nccl-tests trims each rank's share to a multiple "
            "of 16 bytes and prints them as 0-byte rows"
        )
    shapes = [shape for shape in shapes if shape.param_count > 0]
    series = Series(collective=collective, nranks=ctx.world_size)
    if not shapes:
        return series
    if ctx.sharing is not None:
        ctx.sharing.look()  # before any batch: no NVML query runs while one is timed
    largest = max(max(s.send_count, s.recv_count) for s in shapes) * config.wordsize
    buffers = collectives.Buffers(largest, ctx.buffers)
    redop, root = config.redop_for(collective), config.root_for(collective)
    op_name = config.op if redop != "none" else "sum"
    fault = ctx.fault
    corrupt = fault is not None and fault.kind == "corrupt" and fault.rank == ctx.rank
    timing_log = TimingNotes(collective, config)
    wrong_total, busbw_values = 0, []
    try:
        for shape in shapes:
            if ctx.on_size is not None:
                ctx.on_size(collective, shape.size_bytes)
            placed: dict[bool, Measurement | None] = {False: None, True: None}
            if ctx.traffic is not None:
                ctx.traffic.begin()
            launched, check_launches = ctx.timer.launches, 0
            for in_place in (False, True):
                work = collectives.build(
                    ctx.nccl, ctx.comm, ctx.stream.handle, shape, in_place=in_place, buffers=buffers,
                    dtype=config.dtype, op=op_name, root=max(root, 0), rank=ctx.rank,
                    nccl_version=ctx.version, loop=ctx.timer.timing_loop,
                )  # fmt: skip
                waited = ctx.timer.waits.timed(ctx.stream.synchronize)  # not this rank's own time
                slowed = [slowed_launch(fault, ctx.rank, call, waited) for call in work.calls]
                if all(call is not None for call in slowed):
                    work.calls = [call for call in slowed if call is not None]
                    work.native = None  # the slowed calls are Python: the C loop would skip them
                samples = _measure(ctx, work, collective, shape.size_bytes, warm=not in_place)
                wrong: int | None = None
                if config.check:
                    local = checking.run_check(
                        work, buffers, ctx.stream, dtype=config.dtype, op=op_name, root=max(root, 0),
                        rank=ctx.rank, corrupt=corrupt, device=ctx.checker,
                    )  # fmt: skip
                    if local is not None:  # run_check launched the collective once
                        check_launches += 1
                    table = ctx.control.allgather(
                        None if local is None else [local.wrong, local.index, local.expected, local.got]
                    )
                    if all(row is not None for row in table):
                        wrong = int(sum(row[0] for row in table))
                        if wrong and ctx.rank == 0:
                            note_first_wrong(notes, collective, shape.size_bytes, in_place, table)
                placed[in_place] = measurement(shape, samples, wrong, config)
                if ctx.rank == 0:
                    timing_log.add(shape.size_bytes, in_place, samples)
            calls = ctx.timer.launches - launched + check_launches
            if ctx.traffic is not None:
                ctx.stream.synchronize()  # this rank's last call of the size is over before the line-up
            moved = ctx.traffic.finish(shape, calls) if ctx.traffic is not None else []
            if ctx.rank != 0:
                continue
            row = Row(
                size_bytes=shape.size_bytes, count=shape.count, dtype=config.dtype, redop=redop, root=root,
                out_of_place=placed[False], in_place=placed[True], traffic=moved,
            )  # fmt: skip
            for m in (row.out_of_place, row.in_place):
                if m is not None:
                    busbw_values.append(m.busbw_gbs)
                    wrong_total += m.wrong or 0
            series.rows.append(row)
            if ctx.on_row is not None:
                ctx.on_row(collective, row)
    finally:
        ctx.stream.synchronize()
        buffers.free()
    if ctx.sharing is not None:  # every rank takes part: each host's watch says what it saw
        seen = ctx.control.allgather(ctx.sharing.take())
        note = sharing_note(collective, seen) if ctx.rank == 0 else None
        if note:
            notes.append(note)
    if ctx.rank == 0:
        notes.extend(timing_log.notes())
        series.avg_busbw_gbs = sum(busbw_values) / len(busbw_values) if busbw_values else None
        series.wrong_total = wrong_total if config.check else None
    return series


def _measure(
    ctx: SweepContext, work: collectives.Workload, collective: str, size: int, *, warm: bool
) -> Samples:
    try:
        return ctx.timer.measure(work, warm=warm)  # the timer applies it in its exact mode only
    except ctx.nccl.NCCLError as exc:
        text = " ".join(str(exc).split())
        if "invalid argument" in text.lower() or "InvalidArgument" in text:
            config = ctx.timer.config
            raise UsageError(
                f"{collective} at {size} B: NCCL {ctx.library.version} refused --dtype {config.dtype} "
                f"--op {config.op} ({text[:120]}); NCCL has no such reduction here (NCCL 2.28 has no avg "
                "for fp8, for one): use another --op or --dtype"
            ) from exc
        raise GpufabricError(
            f"NCCL {collective} at {size} B failed on rank {ctx.rank}: {text[:300]}"
        ) from exc
