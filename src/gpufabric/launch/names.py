"""What ``--on`` names: the launchers, apart from the launchers themselves, so a command's help can list
them without importing every launcher and its pydantic options (``registry`` maps each name to one).
"""

from __future__ import annotations

from typing import Literal, get_args

LauncherName = Literal["local", "mpirun", "slurm", "kubernetes", "skypilot"]
LAUNCHER_NAMES: tuple[str, ...] = get_args(LauncherName)
