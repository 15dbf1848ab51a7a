"""Helpers for the reliability suite (a plain module: ``conftest`` names collide across test folders)."""

from __future__ import annotations

from pathlib import Path


def alive_processes(needle: str) -> list[int]:
    """Pids (not zombies) whose command line contains ``needle`` (a run's config path)."""
    alive = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes()
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if needle.encode() in cmdline and state != "Z":
            alive.append(int(proc.name))
    return alive
