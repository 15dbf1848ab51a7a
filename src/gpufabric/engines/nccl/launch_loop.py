"""The timed launch loop in C: ``n`` NCCL calls with no Python between them, as nccl-tests' loop runs.

Below about 1 MB a collective on NVLink is bound by the host: NCCL's own enqueue (planning the work,
``cudaLaunchKernelEx``) costs about as much as the kernel runs, so every microsecond the host adds per
call is a microsecond per iteration. A Python loop over nccl4py's bindings adds 1-2 us per call (the
call, argument conversion, the GIL released and taken back): on 2 H200s ``-n 200`` read 12.8 us an
all_gather against nccl-tests' 11.0 us with the Python loop (docs/benchmarks.md, issue 36). So the timed
batch runs this small C function instead, called once per batch through ctypes (which releases the GIL):
it walks a table of prepared calls (the function pointer of ``ncclAllReduce`` and friends, taken from the
libnccl the engine loaded, and their arguments) exactly as ``Workload.batch`` orders them.

It is compiled on first use with the host's C compiler (``$CC``, ``cc`` or ``gcc``) into the user's cache
and reused after. Where no compiler exists, or ``GPUFABRIC_LAUNCH_LOOP=python``, the batch runs the Python
loop and the run's notes say so (small sizes then read a microsecond or two per call above nccl-tests).
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from gpufabric.boundary_names import LAUNCH_LOOP_ENV

IN_PROGRESS = 7
"""``ncclInProgress``: what a call on a non-blocking communicator returns when it succeeded (nccl4py's
``check_status`` lets it pass too); the C loop reads it from here."""

SOURCE = r"""
#include <stddef.h>
#include <stdint.h>
typedef int (*f_ppsiipp)(const void*, void*, size_t, int, int, void*, void*);
typedef int (*f_ppsiiipp)(const void*, void*, size_t, int, int, int, void*, void*);
typedef int (*f_ppsipp)(const void*, void*, size_t, int, void*, void*);
typedef int (*f_psiipp)(void*, size_t, int, int, void*, void*);
typedef int (*f_void)(void);
typedef struct { int64_t kind; void* fn; uint64_t a[8]; } gf_op;
#define P(i) ((void*)(uintptr_t)o->a[i])
int gf_launch_loop(const gf_op* ops, const int32_t* starts, int32_t ncalls, int64_t iters, int64_t* failed) {
  for (int64_t i = 0; i < iters; i++) {
    int32_t c = (int32_t)(i % ncalls);
    for (int32_t j = starts[c]; j < starts[c + 1]; j++) {
      const gf_op* o = &ops[j];
      int s;
      switch (o->kind) {
        case 0: s = ((f_ppsiipp)o->fn)(P(0), P(1), (size_t)o->a[2], (int)o->a[3], (int)o->a[4],
                                       P(5), P(6)); break;
        case 1: s = ((f_ppsiiipp)o->fn)(P(0), P(1), (size_t)o->a[2], (int)o->a[3], (int)o->a[4],
                                        (int)o->a[5], P(6), P(7)); break;
        case 2: s = ((f_ppsipp)o->fn)(P(0), P(1), (size_t)o->a[2], (int)o->a[3], P(4), P(5)); break;
        case 3: s = ((f_psiipp)o->fn)(P(0), (size_t)o->a[1], (int)o->a[2], (int)o->a[3], P(4), P(5)); break;
        case 4: s = ((f_void)o->fn)(); break;
        default: s = -1;
      }
      if (s != 0 && s != GF_IN_PROGRESS) {  /* ncclInProgress: a non-blocking communicator's success */
        const gf_op* last = &ops[starts[c + 1] - 1];
        if (j < starts[c + 1] - 1 && last->kind == 4) ((f_void)last->fn)();  /* close an open group */
        *failed = i;
        return s;
      }
    }
  }
  return 0;
}
""".replace("GF_IN_PROGRESS", str(IN_PROGRESS))

CALLS = {
    # NCCL's C symbol -> (its C signature as the kind the C switch above dispatches on, nccl4py's binding).
    "ncclAllReduce": (0, "all_reduce"),  # send, recv, count, datatype, op, comm, stream
    "ncclReduceScatter": (0, "reduce_scatter"),
    "ncclBroadcast": (0, "broadcast"),  # ... root in op's place
    "ncclGather": (0, "gather"),
    "ncclScatter": (0, "scatter"),
    "ncclReduce": (1, "reduce"),  # send, recv, count, datatype, op, root, comm, stream
    "ncclAllGather": (2, "all_gather"),  # send, recv, count, datatype, comm, stream
    "ncclAlltoAll": (2, "allto_all"),
    "ncclSend": (3, "send"),  # buffer, count, datatype, peer, comm, stream
    "ncclRecv": (3, "recv"),
    "ncclGroupStart": (4, "group_start"),
    "ncclGroupEnd": (4, "group_end"),
}


class LaunchOp(NamedTuple):
    """One NCCL call: its C symbol and its arguments (pointers, counts, enums; the communicator and the
    stream as nccl4py holds them, integers the C table takes as they are)."""

    symbol: str
    args: tuple[Any, ...]


class _Op(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int64), ("fn", ctypes.c_void_p), ("a", ctypes.c_uint64 * 8)]


@dataclass(frozen=True)
class NativeProgram:
    """A workload's calls as the C loop's table (``ops`` flat, call ``c`` is ``ops[starts[c]:starts[c+1]]``)
    and the compiled loop that runs it."""

    ops: Any
    starts: Any
    ncalls: int
    library: Any

    def run(self, iters: int) -> tuple[int, int]:
        """Run ``iters`` iterations; (NCCL's status, the failing iteration) - (0, -1) when all succeeded. A
        call that fails inside a group (``ncclSend``/``ncclRecv``) has the group closed before the loop
        returns, so the communicator is left as the Python loop's exception would leave it."""
        failed = ctypes.c_int64(-1)
        status = self.library.gf_launch_loop(self.ops, self.starts, self.ncalls, iters, ctypes.byref(failed))
        return int(status), int(failed.value)


@dataclass
class LaunchLoop:
    """The compiled loop bound to this process's libnccl, or the reason there is none (``python``)."""

    library: Any | None
    nccl: Any | None
    why_python: str = ""
    _addresses: dict[str, int] = field(default_factory=dict)
    """Each NCCL symbol's function pointer, looked up once (every workload of the sweep uses them)."""

    @property
    def native(self) -> bool:
        return self.library is not None and self.nccl is not None

    def describe(self) -> str:
        if self.native:
            return "launch loop: C (nccl-tests' loop: no Python between the timed calls)"
        return (
            f"launch loop: Python ({self.why_python}); small sizes may read 1-2 us per call above nccl-tests"
        )

    def program(self, calls: Sequence[Sequence[LaunchOp]]) -> NativeProgram | None:
        """The C table of ``calls`` (one list of NCCL calls per iteration), or None without the loop."""
        if not self.native or not calls:
            return None
        flat = [op for call in calls for op in call]
        ops = (_Op * max(len(flat), 1))()
        for slot, op in zip(ops, flat, strict=False):
            slot.kind = CALLS[op.symbol][0]
            slot.fn = self._address(op.symbol)
            for k, value in enumerate(op.args):
                slot.a[k] = int(value) & 0xFFFFFFFFFFFFFFFF  # a negative int (root -1) as C reads it back
        starts = (ctypes.c_int32 * (len(calls) + 1))()
        at = 0
        for c, call in enumerate(calls):
            starts[c] = at
            at += len(call)
        starts[len(calls)] = at
        return NativeProgram(ops, starts, len(calls), self.library)

    def _address(self, symbol: str) -> int:
        address = self._addresses.get(symbol)
        if address is None:
            address = self._addresses[symbol] = int(
                ctypes.cast(getattr(self.nccl, symbol), ctypes.c_void_p).value or 0
            )
        return address


def raise_for(status: int, iteration: int) -> None:
    """NCCL's error for ``status``, as the Python loop's binding would have raised it."""
    from gpufabric.engines.nccl.library import bindings

    bindings().check_status(status)  # raises nccl4py's NCCLError, as a failed binding call does
    raise RuntimeError(f"NCCL returned {status} at timed iteration {iteration} of the C launch loop")


class NoCompiler(Exception):
    """No C compiler on this host, and no loop compiled before."""


def compiled(cache: Path, environ: Mapping[str, str]) -> Path:
    """The loop's shared object in ``cache``, compiled once per source and machine (atomic: ranks of one
    host may compile at the same moment)."""
    tag = hashlib.sha256(f"{SOURCE}{platform.machine()}".encode()).hexdigest()[:16]
    target = cache / f"launch-loop-{tag}.so"
    if target.is_file():
        _trusted(cache)
        _trusted(target)
        return target
    compiler = next(
        (c for c in (environ.get("CC"), "cc", "gcc") if c and shutil.which(c, path=environ.get("PATH"))), None
    )
    if compiler is None:
        raise NoCompiler
    cache.mkdir(mode=0o700, parents=True, exist_ok=True)
    _trusted(cache)
    with tempfile.TemporaryDirectory(dir=cache) as work:
        source = Path(work) / "loop.c"
        source.write_text(SOURCE)
        built = Path(work) / "loop.so"
        subprocess.run(
            [compiler, "-O2", "-shared", "-fPIC", "-o", str(built), str(source)],
            check=True, capture_output=True, timeout=60,
        )  # fmt: skip
        os.replace(built, target)
    return target


def _trusted(path: Path) -> None:
    """A shared object this process loads must be its user's and writable by nobody else: a cache another
    user could write into would let them run code in every rank (OSError: the caller uses a private one)."""
    info = path.stat()
    if info.st_uid != os.getuid() or info.st_mode & 0o022:
        raise PermissionError(f"{path} is not this user's alone (owner {info.st_uid}, mode {info.st_mode:o})")


def _cache_dir(environ: Mapping[str, str]) -> Path:
    base = environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "gpufabric"


def load(nccl_path: str | None, environ: Mapping[str, str] | None = None) -> LaunchLoop:
    """The C loop bound to the libnccl at ``nccl_path`` (already loaded), or the Python loop and why."""
    environ = os.environ if environ is None else environ
    if environ.get(LAUNCH_LOOP_ENV, "").lower() == "python":
        return LaunchLoop(None, None, f"{LAUNCH_LOOP_ENV}=python")
    if not nccl_path:
        return LaunchLoop(None, None, "libnccl's file is not known")
    try:
        try:
            shared = compiled(_cache_dir(environ), environ)
        except OSError:  # an unwritable or shared cache: a private directory of this run's own
            shared = compiled(Path(tempfile.mkdtemp(prefix="gpufabric-loop-")), environ)
        library = ctypes.CDLL(str(shared))
        library.gf_launch_loop.restype = ctypes.c_int
        library.gf_launch_loop.argtypes = [
            ctypes.POINTER(_Op), ctypes.POINTER(ctypes.c_int32), ctypes.c_int32, ctypes.c_int64,
            ctypes.POINTER(ctypes.c_int64),
        ]  # fmt: skip
        nccl = ctypes.CDLL(nccl_path)  # the same loaded library: dlopen returns its handle
    except NoCompiler:
        return LaunchLoop(None, None, "no C compiler (cc, gcc or $CC) to build the C loop")
    except (OSError, subprocess.SubprocessError) as exc:
        reason = getattr(exc, "stderr", b"") or str(exc).encode()
        first = reason.decode(errors="replace").strip().splitlines()[:1]
        return LaunchLoop(None, None, f"the C loop could not be built or loaded: {' '.join(first)[:160]}")
    return LaunchLoop(library, nccl)
