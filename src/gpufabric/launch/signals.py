"""Stop signals as an exception: ``stopping_on_signals()`` (installed by the CLI around every command)
turns SIGINT, SIGTERM and SIGHUP into ``Interrupted``, which unwinds through every supervisor's clean-up
(``processes.run_commands``' stop_all, Slurm's ``scancel``, the Kubernetes delete, SkyPilot's
``sky cancel``); each adds the ranks it stopped. Without it SIGTERM/SIGHUP would end this process at once
and leave the ranks (each in its own session, so the signal does not reach them) running.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator, Sequence
from types import FrameType

STOP_SIGNALS: tuple[signal.Signals, ...] = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Interrupted(BaseException):
    """A stop signal arrived. A BaseException, like KeyboardInterrupt, so no ``except Exception`` swallows
    it on the way out; unlike KeyboardInterrupt, typer does not turn it into a silent exit 130, so the
    CLI can say what was stopped. ``stopped_ranks`` is filled in by the supervisors it passes through."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum
        self.stopped_ranks = 0

    @property
    def signal_name(self) -> str:
        try:
            return signal.Signals(self.signum).name
        except ValueError:
            return f"signal {self.signum}"

    @property
    def exit_code(self) -> int:
        """128 + the signal number, as a shell reports a process ended by it (130 SIGINT, 143 SIGTERM)."""
        return 128 + self.signum


class _Deferral:
    """Signals that arrived while a process was being started (see ``deferred_signals``)."""

    depth = 0
    pending: list[int] = []  # noqa: RUF012 - one process-wide state, like the signal handlers themselves


@contextlib.contextmanager
def deferred_signals() -> Iterator[None]:
    """Hold ``Interrupted`` back until the block ends. Starting a rank is fork + exec + registering the
    child; a stop signal raised in between would lose the child (it runs on with nobody to stop it), so the
    supervisor starts and registers each child in this block and the signal is raised right after."""
    _Deferral.depth += 1
    try:
        yield
    finally:
        _Deferral.depth -= 1
        if _Deferral.depth == 0 and _Deferral.pending:
            signum = _Deferral.pending[0]
            _Deferral.pending.clear()
            raise Interrupted(signum)


@contextlib.contextmanager
def stopping_on_signals(signals: Sequence[signal.Signals] = STOP_SIGNALS) -> Iterator[None]:
    """Raise ``Interrupted`` in the main thread on the first of ``signals``; ignore repeats, so a second
    Ctrl-C cannot cut the clean-up short and orphan the ranks. Restores the previous handlers."""
    raised: list[int] = []

    def handler(signum: int, frame: FrameType | None) -> None:
        if raised:
            return
        raised.append(signum)
        if _Deferral.depth:
            _Deferral.pending.append(signum)
            return
        raise Interrupted(signum)

    previous = {sig: signal.signal(sig, handler) for sig in signals}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
