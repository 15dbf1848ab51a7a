"""Talk to NCCL's RAS service on a node of a running job: the text protocol ``ncclras`` speaks.

The exchange is NCCL's own (``src/ras/client.cc`` and ``src/ras/client_support.cc``, tag v2.28.9-1;
troubleshooting/ras.rst): ``CLIENT PROTOCOL 2`` is answered ``SERVER PROTOCOL <n>``; ``TIMEOUT <s>`` (RAS's
wait for other processes, 5 s by default) and ``SET FORMAT json`` (NCCL 2.28.7 and newer) are answered
``OK`` or ``ERROR: ...``; ``VERBOSE STATUS`` is answered with the report, after which RAS closes the
connection. ``DIAGNOSTICS`` (NCCL 2.31 and newer, text only) answers ``NCCL DIAG`` lines, or
``BUSY: diagnostics already in progress``. RAS listens on ``localhost:28028`` unless the job set
``NCCL_RAS_ADDR`` (host:port); a remote node's RAS answers only when the job bound it to an address the
caller reaches. Every step has a deadline: a stopped job never hangs the caller.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Mapping
from dataclasses import dataclass

from gpufabric.errors import GpufabricError, UsageError
from gpufabric.nccl_native.ras_json import parse_ras_json
from gpufabric.nccl_native.ras_model import RasStatus
from gpufabric.nccl_native.ras_text import parse_ras_text

DEFAULT_PORT = 28028  # NCCL_RAS_CLIENT_PORT, src/ras/ras_internal.h
RAS_ADDR_ENV = "NCCL_RAS_ADDR"
CLIENT_PROTOCOL = 2  # NCCL_RAS_CLIENT_PROTOCOL, unchanged from 2.24 to 2.31
RAS_TIMEOUT_S = 5  # RAS_COLLECTIVE_LEG_TIMEOUT_SEC: RAS's own wait for the other processes
_EXTRA_S = 5  # RAS_COLLECTIVE_EXTRA_TIMEOUT_SEC: the most RAS adds to it before it answers
_REACH_HINT = (
    "is an NCCL 2.24+ job running there with RAS on (NCCL_RAS_ENABLE, default 1), and does --host match "
    f"the job's {RAS_ADDR_ENV} (default localhost:{DEFAULT_PORT})?"
)


@dataclass(frozen=True)
class RasAddress:
    """Where a RAS service listens."""

    host: str
    port: int

    def __str__(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


def ras_address(text: str | None, environ: Mapping[str, str]) -> RasAddress:
    """``HOST[:PORT]`` (``[IPv6]:PORT`` too) as an address; without ``text``, the ``NCCL_RAS_ADDR`` this
    environment gives NCCL, else NCCL's default ``localhost:28028``."""
    given = text or environ.get(RAS_ADDR_ENV) or f"localhost:{DEFAULT_PORT}"
    host, port = given, str(DEFAULT_PORT)
    if given.startswith("["):
        host, _, rest = given[1:].partition("]")
        port = rest.removeprefix(":") or port
    elif given.count(":") == 1:
        host, port = given.split(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError(f"--host: {given!r} is not HOST[:PORT]; e.g. node07 or 10.0.0.7:{DEFAULT_PORT}")
    return RasAddress(host, int(port))


class _Connection:
    """A socket to RAS that reads whole lines or everything until RAS closes, each by a deadline."""

    def __init__(self, address: RasAddress, connect_timeout_s: float) -> None:
        self.address = address
        self.buffer = b""
        try:
            self.sock = socket.create_connection((address.host, address.port), timeout=connect_timeout_s)
        except OSError as exc:
            why = exc.strerror or type(exc).__name__
            raise GpufabricError(
                f"RAS at {address}: nothing answered within {connect_timeout_s:g} s ({why}); {_REACH_HINT}"
            ) from exc

    def __enter__(self) -> _Connection:
        return self

    def __exit__(self, *_: object) -> None:
        self.sock.close()

    def _recv(self, deadline: float, what: str) -> bytes:
        left = deadline - time.monotonic()
        if left <= 0:
            raise GpufabricError(f"RAS at {self.address}: no {what} by the deadline; {_REACH_HINT}")
        self.sock.settimeout(left)
        try:
            return self.sock.recv(65536)
        except TimeoutError as exc:
            raise GpufabricError(
                f"RAS at {self.address}: connected, but no {what} within the deadline (a stopped process "
                "can delay RAS's own gathering); retry with a larger --timeout"
            ) from exc

    def ask(self, command: str, deadline: float) -> str:
        """Send one command line and return RAS's one-line answer, without its newline."""
        self.sock.sendall(command.encode() + b"\n")
        while b"\n" not in self.buffer:
            chunk = self._recv(deadline, f"answer to {command!r}")
            if not chunk:
                raise GpufabricError(f"RAS at {self.address}: closed the connection after {command!r}")
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line.decode(errors="replace")

    def read_all(self, command: str, deadline: float, *, send: bool = True) -> str:
        """Send ``command`` (unless already sent) and return what RAS sends until it closes the connection."""
        if send:
            self.sock.sendall(command.encode() + b"\n")
        data = self.buffer
        while chunk := self._recv(deadline, f"report for {command!r}"):
            data += chunk
        self.buffer = b""
        return data.decode(errors="replace")

    def handshake(self, deadline: float) -> int:
        answer = self.ask(f"CLIENT PROTOCOL {CLIENT_PROTOCOL}", deadline)
        if not answer.upper().startswith("SERVER PROTOCOL "):
            raise GpufabricError(
                f"RAS at {self.address}: answered {answer[:80]!r} to the handshake, not 'SERVER PROTOCOL n'; "
                "is that port NCCL's RAS?"
            )
        return int(answer.split()[2]) if answer.split()[2].isdigit() else -1


def query_status(
    address: RasAddress,
    *,
    want_json: bool = True,
    verbose: bool = True,
    ras_timeout_s: int = RAS_TIMEOUT_S,
    connect_timeout_s: float = 2.0,
) -> RasStatus:
    """Ask RAS at ``address`` for the job's status and parse it: JSON where this NCCL has it (2.28.7+),
    its text report otherwise (the returned status notes the fallback). The whole exchange ends within
    ``connect_timeout_s + ras_timeout_s + 5 s`` (RAS's own extra) plus a second of slack."""
    deadline = time.monotonic() + connect_timeout_s + ras_timeout_s + _EXTRA_S + 1
    notes: list[str] = []
    with _Connection(address, connect_timeout_s) as conn:
        protocol = conn.handshake(deadline)
        if protocol != CLIENT_PROTOCOL:
            notes.append(
                f"RAS speaks protocol {protocol}, this client {CLIENT_PROTOCOL}; read as far as known"
            )
        answer = conn.ask(f"TIMEOUT {ras_timeout_s}", deadline)
        if answer.upper() != "OK":
            raise GpufabricError(f"RAS at {address}: refused 'TIMEOUT {ras_timeout_s}': {answer[:80]}")
        use_json = want_json
        if want_json:
            answer = conn.ask("SET FORMAT json", deadline)
            if answer.upper() != "OK":
                use_json = False
                notes.append(
                    "this NCCL's RAS has no JSON output (NCCL 2.28.7 added it); read its text report"
                )
        raw = conn.read_all("VERBOSE STATUS" if verbose else "STATUS", deadline)
    status = (
        parse_ras_json(raw, address=str(address)) if use_json else parse_ras_text(raw, address=str(address))
    )
    return status.model_copy(update={"notes": [*notes, *status.notes]})


def query_diagnostics(address: RasAddress, *, timeout_s: float = 30.0, connect_timeout_s: float = 2.0) -> str:
    """Run RAS's on-demand diagnostics (NCCL 2.31+) at ``address`` and return its ``NCCL DIAG`` report as
    sent; one-line errors when RAS is busy with another request or this NCCL has no diagnostics."""
    deadline = time.monotonic() + connect_timeout_s + timeout_s
    with _Connection(address, connect_timeout_s) as conn:
        conn.handshake(deadline)
        # An NCCL without diagnostics answers "ERROR: Unknown command" and keeps the connection open.
        first = conn.ask("DIAGNOSTICS", deadline)
        if first.startswith("BUSY"):
            raise GpufabricError(f"RAS at {address}: {first}; retry when the running request has finished")
        if first.startswith("ERROR"):
            raise GpufabricError(f"RAS at {address}: {first} (RAS diagnostics need NCCL 2.31 or newer)")
        return first + "\n" + conn.read_all("DIAGNOSTICS", deadline, send=False)
