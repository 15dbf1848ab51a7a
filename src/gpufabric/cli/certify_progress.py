"""certify's progress on stderr (rich): the stage, the node and the seconds of ``--budget`` left."""

from __future__ import annotations

from types import TracebackType

from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn


class StageProgress:
    """A one-line spinner, or nothing when ``enabled`` is False (not a terminal, ``--no-progress``)."""

    def __init__(self, *, enabled: bool) -> None:
        self.progress = (
            Progress(
                SpinnerColumn(),
                TextColumn("{task.description}"),
                TimeElapsedColumn(),
                console=Console(stderr=True),
                transient=True,
            )
            if enabled
            else None
        )
        self.task = self.progress.add_task("certify: starting", total=None) if self.progress else None

    def update(self, stage: str, node: str | None, left_s: float) -> None:
        if self.progress is None or self.task is None:
            return
        where = f" {node}" if node else ""
        self.progress.update(
            self.task, description=f"certify: stage {stage}{where}, {max(left_s, 0):.0f} s of budget left"
        )

    def __enter__(self) -> StageProgress:
        if self.progress is not None:
            self.progress.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self.progress is not None:
            self.progress.stop()
