"""Host lists as users write them: ``--hosts a,b:8`` and OpenMPI hostfiles (``node1 slots=8``).

Parsing only; resolving names and reaching hosts is the launcher's job at execute time.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from gpufabric.errors import InputError, UsageError
from gpufabric.textfile import read_text_file

_HOST = re.compile(r"^[A-Za-z0-9_.\-\[\]:]+$")
_HOSTFILE_LINE = re.compile(r"^(?P<host>\S+)(?:\s+(?:slots|max[-_]slots)\s*=\s*(?P<slots>\d+))*\s*$")


class HostSlots(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    host: str
    slots: int | None = None


def parse_hosts(items: Sequence[str]) -> list[HostSlots]:
    """``["a", "b:8"]`` or ``["a,b:8"]`` -> hosts; a repeated host is an error (one entry per node)."""
    hosts: list[HostSlots] = []
    for item in items:
        for part in filter(None, (p.strip() for p in item.split(","))):
            host, slots = _split_slots(part)
            hosts.append(HostSlots(host=host, slots=slots))
    _no_duplicates(hosts, "--hosts")
    return hosts


def _split_slots(part: str) -> tuple[str, int | None]:
    # IPv6 literals keep their colons inside brackets: [fe80::1]:8
    if part.startswith("["):
        host, _, rest = part.partition("]")
        host += "]"
        slots_text = rest.removeprefix(":")
    elif part.count(":") == 1:
        host, slots_text = part.split(":")
    else:
        host, slots_text = part, ""
    if not host or not _HOST.match(host):
        raise UsageError(f"--hosts {part!r}: expected HOST or HOST:SLOTS, e.g. node1:8")
    if slots_text and (not slots_text.isdigit() or int(slots_text) < 1):
        raise UsageError(f"--hosts {part!r}: slots must be a positive whole number, e.g. {host}:8")
    return host, int(slots_text) if slots_text else None


def parse_hostfile(path: Path) -> list[HostSlots]:
    """An OpenMPI hostfile: one host per line, optional ``slots=N``; ``#`` starts a comment."""
    text = read_text_file(path, "--hostfile")
    hosts: list[HostSlots] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        match = _HOSTFILE_LINE.match(line)
        if not match:
            raise InputError(f"{path} line {number}: {raw.strip()!r} is not 'HOST [slots=N]'")
        slots = match.group("slots")
        hosts.append(HostSlots(host=match.group("host"), slots=int(slots) if slots else None))
    if not hosts:
        raise InputError(f"{path}: the hostfile lists no hosts; write one 'HOST slots=N' per line")
    _no_duplicates(hosts, str(path))
    return hosts


def _no_duplicates(hosts: list[HostSlots], where: str) -> None:
    seen: set[str] = set()
    for entry in hosts:
        if entry.host in seen:
            raise UsageError(
                f"{where}: host {entry.host!r} is listed twice; list each node once (use HOST:SLOTS)"
            )
        seen.add(entry.host)
