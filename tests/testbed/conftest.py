"""The test bed's tests: asked once per session whether this machine can build a bed (``probe_support``
adds a namespace, a veth, a bridge and tries each qdisc); where it cannot, every ``netns`` test skips
with that one line. After the session no bed of a dead owner may be left on the machine."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from gpufabric.testbed import BedSupport, probe_support
from gpufabric.testbed.sweep import bed_namespaces, owner_alive

_SUPPORT: list[BedSupport] = []


def support() -> BedSupport:
    """This machine's answer, probed on first use and kept for the session."""
    if not _SUPPORT:
        _SUPPORT.append(probe_support())
    return _SUPPORT[0]


@pytest.fixture(autouse=True)
def _netns_allowed(request: pytest.FixtureRequest) -> None:
    if request.node.get_closest_marker("netns") is not None and not support().ok:
        pytest.skip(f"netns: {support().reason}")


@pytest.fixture(scope="session", autouse=True)
def _nothing_left_behind() -> Iterator[None]:
    yield
    if not _SUPPORT or not _SUPPORT[0].ok:
        return
    leftovers = [ns for run, spaces in bed_namespaces().items() if not owner_alive(run) for ns in spaces]
    assert not leftovers, f"test beds left behind by this session: {leftovers}"


@pytest.fixture
def require_qdisc() -> Callable[[str], None]:
    """Call with sch_tbf, sch_htb or sch_netem: skips (one line) when the kernel lacks it."""

    def require(module: str) -> None:
        reason = support().qdisc_reason(module)
        if reason is not None:
            pytest.skip(reason)

    return require
