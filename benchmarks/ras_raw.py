"""Dump what NCCL's RAS socket sends, byte for byte, for fixtures: no parsing, nothing of gpufabric.

    python3 benchmarks/ras_raw.py localhost:28028 out.raw "CLIENT PROTOCOL 2" "SET FORMAT json" "STATUS"

Each command is sent as one line; after each, whatever arrives within a second is kept (RAS answers the
set-up commands with one line); after the last, everything until RAS closes the connection (at most 40 s).
The file holds RAS's bytes only; ``OUT_FILE.cmds`` the commands sent, so a test can replay the session.
"""

from __future__ import annotations

import socket
import sys
import time


def main(argv: list[str]) -> int:
    host, _, port = argv[1].rpartition(":")
    out, commands = argv[2], argv[3:]
    received = b""
    with socket.create_connection((host or "localhost", int(port)), timeout=5) as sock:
        for number, command in enumerate(commands):
            sock.sendall(command.encode() + b"\n")
            last = number == len(commands) - 1
            deadline = time.monotonic() + (40 if last else 1)
            while (left := deadline - time.monotonic()) > 0:
                sock.settimeout(left)
                try:
                    chunk = sock.recv(65536)
                except TimeoutError:
                    break
                if not chunk:
                    break
                received += chunk
                if not last and chunk.endswith(b"\n"):
                    break
    with open(out, "wb") as handle:
        handle.write(received)
    with open(out + ".cmds", "w", encoding="utf-8") as handle:
        handle.write("\n".join(commands) + "\n")
    print(f"{len(received)} bytes from {argv[1]} -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
