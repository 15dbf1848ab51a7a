"""``train.gloo_waiters``: the end of groups of asynchronous works, and a failed wait raised on the caller's
thread, not lost in the waiter's (works here are anything with ``wait()``, as gloo's are)."""

from __future__ import annotations

import time

import pytest

from gpufabric.train.gloo_waiters import GlooWaiters


class _Work:
    def __init__(self, seconds: float, error: Exception | None = None) -> None:
        self.seconds, self.error = seconds, error

    def wait(self) -> None:
        time.sleep(self.seconds)
        if self.error is not None:
            raise self.error


def test_join_gives_the_end_of_the_last_group() -> None:
    waiters, started = GlooWaiters(), time.perf_counter()
    waiters.wait_for([_Work(0.0)])
    waiters.wait_for([_Work(0.0), _Work(0.05)])
    end = waiters.join()
    assert end - started >= 0.05 and end <= time.perf_counter()


def test_a_failed_wait_is_raised_by_join() -> None:
    waiters = GlooWaiters()
    waiters.wait_for([_Work(0.0)])
    waiters.wait_for([_Work(0.0, RuntimeError("gloo: timed out waiting for peer"))])
    with pytest.raises(RuntimeError, match="timed out"):
        waiters.join()
