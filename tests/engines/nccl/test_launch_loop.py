# ruff: noqa: E501  (the libnccl stand-in is C, one entry point a line)
"""The C launch loop that times the direct engine's batches makes exactly the calls the Python loop makes.

The loop is compiled here with the host's C compiler, as a GPU host compiles it, and bound to a small
libnccl stand-in compiled beside it (every NCCL entry point the engine calls, recording its arguments).
Each collective's calls are made once through the C loop and once through the Python loop's bound
bindings; both records must agree call for call, argument for argument. The real libnccl runs it in the GPU
suite (and ``benchmarks/gpu.sh timing`` compares its times with nccl-tests')."""

from __future__ import annotations

import ctypes
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from gpufabric.bench.semantics import layout
from gpufabric.engines.nccl import collectives, launch_loop

STAND_IN = r"""
#include <stddef.h>
#include <stdint.h>
uint64_t records[4096][9];
int count = 0, fail_at = -1, ok_status = 0;
static int put(int code, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5,
               uint64_t a6, uint64_t a7) {
  if (count == fail_at) { fail_at = -1; return 5; }  /* fails once */
  uint64_t* r = records[count++];
  r[0] = code; r[1] = a0; r[2] = a1; r[3] = a2; r[4] = a3; r[5] = a4; r[6] = a5; r[7] = a6; r[8] = a7;
  return ok_status;
}
#define U(x) ((uint64_t)(uintptr_t)(x))
int ncclAllReduce(const void* s, void* r, size_t n, int t, int o, void* c, void* st) { return put(0, U(s), U(r), n, t, o, U(c), U(st), 0); }
int ncclReduceScatter(const void* s, void* r, size_t n, int t, int o, void* c, void* st) { return put(1, U(s), U(r), n, t, o, U(c), U(st), 0); }
int ncclBroadcast(const void* s, void* r, size_t n, int t, int root, void* c, void* st) { return put(2, U(s), U(r), n, t, root, U(c), U(st), 0); }
int ncclGather(const void* s, void* r, size_t n, int t, int root, void* c, void* st) { return put(3, U(s), U(r), n, t, root, U(c), U(st), 0); }
int ncclScatter(const void* s, void* r, size_t n, int t, int root, void* c, void* st) { return put(4, U(s), U(r), n, t, root, U(c), U(st), 0); }
int ncclReduce(const void* s, void* r, size_t n, int t, int o, int root, void* c, void* st) { return put(5, U(s), U(r), n, t, o, root, U(c), U(st)); }
int ncclAllGather(const void* s, void* r, size_t n, int t, void* c, void* st) { return put(6, U(s), U(r), n, t, U(c), U(st), 0, 0); }
int ncclAlltoAll(const void* s, void* r, size_t n, int t, void* c, void* st) { return put(7, U(s), U(r), n, t, U(c), U(st), 0, 0); }
int ncclSend(const void* b, size_t n, int t, int peer, void* c, void* st) { return put(8, U(b), n, t, peer, U(c), U(st), 0, 0); }
int ncclRecv(void* b, size_t n, int t, int peer, void* c, void* st) { return put(9, U(b), n, t, peer, U(c), U(st), 0, 0); }
int ncclGroupStart(void) { return put(10, 0, 0, 0, 0, 0, 0, 0, 0); }
int ncclGroupEnd(void) { return put(11, 0, 0, 0, 0, 0, 0, 0, 0); }
"""
ORDER = [
    "ncclAllReduce",
    "ncclReduceScatter",
    "ncclBroadcast",
    "ncclGather",
    "ncclScatter",
    "ncclReduce",
    "ncclAllGather",
    "ncclAlltoAll",
    "ncclSend",
    "ncclRecv",
    "ncclGroupStart",
    "ncclGroupEnd",
]
COMM, STREAM = 0x7F00AA00, 0x7F00BB00


@pytest.fixture(scope="module")
def stand_in(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    where = tmp_path_factory.mktemp("loop")
    if not any(shutil.which(c) for c in ("cc", "gcc")):
        pytest.skip("no C compiler (cc or gcc): `make os-deps` installs gcc")
    (where / "nccl.c").write_text(STAND_IN)
    subprocess.run(
        ["cc", "-O1", "-shared", "-fPIC", "-o", str(where / "libnccl-stand-in.so"), str(where / "nccl.c")],
        check=True,
        capture_output=True,
    )
    return where / "libnccl-stand-in.so", where / "cache"


def _c_records(library: Path, program: Any, iters: int) -> list[tuple[Any, ...]]:
    lib = ctypes.CDLL(str(library))
    ctypes.c_int.in_dll(lib, "count").value = 0
    status, failed = program.run(iters)
    assert (status, failed) == (0, -1)
    rows = (ctypes.c_uint64 * 9 * 4096).in_dll(lib, "records")
    out = []
    for i in range(ctypes.c_int.in_dll(lib, "count").value):
        row = list(rows[i])
        symbol = ORDER[row[0]]
        out.append((symbol, *row[1 : 1 + _arity(symbol)]))
    return out


def _arity(symbol: str) -> int:
    return {0: 7, 1: 8, 2: 6, 3: 6, 4: 0}[launch_loop.CALLS[symbol][0]]


def _python_bindings(log: list[tuple[Any, ...]]) -> SimpleNamespace:
    def recorder(symbol: str) -> Any:
        return lambda *args: log.append((symbol, *args))

    named = {binding: recorder(symbol) for symbol, (_, binding) in launch_loop.CALLS.items()}
    return SimpleNamespace(DataType=SimpleNamespace(Float32=7), RedOp=SimpleNamespace(Sum=0), **named)


def _buffers() -> Any:
    ptr = SimpleNamespace
    return SimpleNamespace(
        nbytes=1 << 20, send=ptr(ptr=0x10000), recv=ptr(ptr=0x400000), fence=ptr(ptr=0x9000)
    )


def _build(
    log: list[tuple[Any, ...]],
    loop: launch_loop.LaunchLoop,
    collective: str,
    *,
    in_place: bool,
    root: int,
    rank: int,
    version: tuple[int, ...],
) -> collectives.Workload:
    """One collective at 4 KB on 4 ranks, its Python calls recorded into ``log``, its C table from ``loop``."""
    return collectives.build(
        _python_bindings(log),
        COMM,
        STREAM,
        layout(collective, 4096, 4, 4),
        in_place=in_place,
        buffers=_buffers(),
        dtype="float",
        op="sum",
        root=root,
        rank=rank,
        nccl_version=version,
        loop=loop,
    )


COLLECTIVES = [
    "all_reduce",
    "reduce_scatter",
    "broadcast",
    "reduce",
    "all_gather",
    "alltoall",
    "gather",
    "scatter",
    "sendrecv",
    "alltoallv",
]


@pytest.mark.parametrize("in_place", [False, True])
@pytest.mark.parametrize("collective", COLLECTIVES)
def test_the_c_loop_makes_the_python_loops_calls(
    stand_in: tuple[Path, Path], collective: str, in_place: bool
) -> None:
    library, cache = stand_in
    loop = launch_loop.load(str(library), {"PATH": "/usr/bin:/bin", "XDG_CACHE_HOME": str(cache)})
    assert loop.native, loop.why_python
    for version in ((2, 28, 9), (2, 27, 7)):  # gather and scatter: NCCL's calls, or nccl-tests' p2p groups
        log: list[tuple[Any, ...]] = []
        work = _build(log, loop, collective, in_place=in_place, root=1, rank=2, version=version)
        assert work.native is not None
        iters = 2 * len(work.calls) + 3  # every region once, twice, and a few more: the modulo of both loops
        for call in work.batch(iters):
            call()
        assert log, "the Python loop made no call"
        assert _c_records(library, work.native, iters) == log


def test_a_failing_call_stops_the_loop_with_ncclS_status_and_iteration(stand_in: tuple[Path, Path]) -> None:
    library, cache = stand_in
    loop = launch_loop.load(str(library), {"PATH": "/usr/bin:/bin", "XDG_CACHE_HOME": str(cache)})
    work = _build([], loop, "all_reduce", in_place=False, root=0, rank=0, version=(2, 28, 9))
    lib = ctypes.CDLL(str(library))
    ctypes.c_int.in_dll(lib, "count").value = 0
    ctypes.c_int.in_dll(lib, "fail_at").value = 6
    try:
        assert work.native is not None
        assert work.native.run(20) == (5, 6)  # the 7th call returned 5: iteration 6 of one call each
    finally:
        ctypes.c_int.in_dll(lib, "fail_at").value = -1


def test_without_a_compiler_or_when_asked_the_python_loop_times_and_says_why(tmp_path: Path) -> None:
    no_cc = launch_loop.load("/x/libnccl.so.2", {"PATH": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path)})
    assert not no_cc.native and "no C compiler" in no_cc.describe()
    asked = launch_loop.load("/x/libnccl.so.2", {"GPUFABRIC_LAUNCH_LOOP": "python"})
    assert not asked.native and "GPUFABRIC_LAUNCH_LOOP=python" in asked.describe()
    assert asked.program([[launch_loop.LaunchOp("ncclGroupStart", ())]]) is None


def _set(library: Path, **values: int) -> None:
    lib = ctypes.CDLL(str(library))
    for name, value in values.items():
        ctypes.c_int.in_dll(lib, name).value = value


def test_in_progress_is_success_as_nccl4py_reads_it(stand_in: tuple[Path, Path]) -> None:
    """A non-blocking communicator's calls return ncclInProgress (7) when they succeeded."""
    library, cache = stand_in
    loop = launch_loop.load(str(library), {"PATH": "/usr/bin:/bin", "XDG_CACHE_HOME": str(cache)})
    work = _build([], loop, "all_reduce", in_place=False, root=0, rank=0, version=(2, 28, 9))
    _set(library, count=0, ok_status=launch_loop.IN_PROGRESS)
    try:
        assert work.native is not None
        assert work.native.run(5) == (0, -1)
        assert ctypes.c_int.in_dll(ctypes.CDLL(str(library)), "count").value == 5
    finally:
        _set(library, ok_status=0)


def test_a_failed_send_inside_a_group_closes_the_group(stand_in: tuple[Path, Path]) -> None:
    library, cache = stand_in
    loop = launch_loop.load(str(library), {"PATH": "/usr/bin:/bin", "XDG_CACHE_HOME": str(cache)})
    work = _build([], loop, "sendrecv", in_place=False, root=0, rank=0, version=(2, 28, 9))
    _set(library, count=0, fail_at=1)  # ncclGroupStart is call 0, the send call 1
    try:
        assert work.native is not None
        assert work.native.run(3) == (5, 0)
        rows = (ctypes.c_uint64 * 9 * 4096).in_dll(ctypes.CDLL(str(library)), "records")
        count = ctypes.c_int.in_dll(ctypes.CDLL(str(library)), "count").value
        assert [ORDER[rows[i][0]] for i in range(count)] == ["ncclGroupStart", "ncclGroupEnd"]
    finally:
        _set(library, fail_at=-1)


def test_a_cache_others_can_write_is_not_loaded_from(stand_in: tuple[Path, Path], tmp_path: Path) -> None:
    library, _ = stand_in
    shared = tmp_path / "shared-cache"
    loop = launch_loop.load(str(library), {"PATH": "/usr/bin:/bin", "XDG_CACHE_HOME": str(shared)})
    assert loop.native
    (shared / "gpufabric").chmod(0o777)  # group and world writable: someone could plant a library there
    planted = launch_loop.load(str(library), {"PATH": "/usr/bin:/bin", "XDG_CACHE_HOME": str(shared)})
    assert planted.native  # built again in a private directory of its own
    assert not str(planted.library._name).startswith(str(shared))  # type: ignore[union-attr]
