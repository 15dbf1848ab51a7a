"""A RAS client socket that answers as NCCL's does (src/ras/client_support.cc, rasClientEventLoop, lines
354-410 at tag v2.28.9-1; DIAGNOSTICS and its BUSY answer per ras.rst at v2.31.2-1): one command per line,
case-insensitive; ``SERVER PROTOCOL 2``; ``OK`` or ``ERROR: ...``; after a status report, the connection
closes. ``has_json`` False answers ``SET FORMAT`` as an unknown command, as NCCL before 2.28.7 does."""

from __future__ import annotations

import socket
import threading
from dataclasses import dataclass, field


@dataclass
class FakeRas:
    status_text: str = ""
    status_json: str = ""
    diagnostics: str | None = None
    has_json: bool = True
    stall_s: float = 0.0  # wait before the report, as RAS does while a stopped process times out
    commands: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(4)
        self.port = self.server.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.close()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            with conn:
                self._session(conn)

    def _session(self, conn: socket.socket) -> None:
        buffer, fmt = b"", "text"
        while True:
            chunk = conn.recv(4096)
            if not chunk:
                return
            buffer += chunk
            while b"\n" in buffer:
                raw, _, buffer = buffer.partition(b"\n")
                cmd = raw.decode().rstrip("\r")
                self.commands.append(cmd)
                low = cmd.lower()
                if low.startswith("client protocol "):
                    conn.sendall(b"SERVER PROTOCOL 2\n")
                elif low.startswith("timeout "):
                    value = cmd[len("timeout ") :]
                    ok = value.isdigit()
                    conn.sendall(b"OK\n" if ok else f"ERROR: Invalid timeout value {value}\n".encode())
                elif low.startswith("set format ") and self.has_json:
                    fmt = cmd[len("set format ") :].lower()
                    conn.sendall(
                        b"OK\n" if fmt in ("text", "json") else f"ERROR: Invalid format {fmt}\n".encode()
                    )
                elif low in ("status", "verbose status"):
                    threading.Event().wait(self.stall_s)
                    conn.sendall((self.status_json if fmt == "json" else self.status_text).encode())
                    return  # RAS_CLIENT_FINISHED: RAS closes the connection
                elif low == "diagnostics" and self.diagnostics is not None:
                    conn.sendall(self.diagnostics.encode())
                    return
                else:
                    conn.sendall(f"ERROR: Unknown command {cmd}\n".encode())
