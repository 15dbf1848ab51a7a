"""Reading a small text file the user named (hostfile, node list, pod_config, labels, kube config): any
failure is one ``InputError`` line naming the flag, the file and the cause, never a traceback.

A file that is not UTF-8 (a UTF-16 export, a binary picked by mistake) says where the first bad byte is.
A file over ``limit_bytes`` is refused before it is read: these files are kilobytes.
"""

from __future__ import annotations

from pathlib import Path

from gpufabric.errors import InputError

DEFAULT_LIMIT_BYTES = 64 << 20


def read_text_file(path: Path, what: str, *, limit_bytes: int = DEFAULT_LIMIT_BYTES) -> str:
    """The UTF-8 text of ``path``; ``what`` names it in errors (``--hostfile``, ``kube config``)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit_bytes + 1)
    except OSError as exc:
        raise InputError(f"{what} {path}: cannot read it ({exc.strerror or exc})") from exc
    if len(data) > limit_bytes:
        raise InputError(
            f"{what} {path}: larger than {limit_bytes >> 20} MiB; this is not the file you meant to give"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(
            f"{what} {path}: not UTF-8 text (byte 0x{data[exc.start]:02x} on line {line}); save it as UTF-8"
        ) from exc
