"""The bed's names and its shaping plan, as pure data: no root, no namespace."""

from __future__ import annotations

import pytest

from gpufabric.errors import UsageError
from gpufabric.testbed import BedNames, SlowNic, SlowPath
from gpufabric.testbed.faults import egress_commands, ingress_commands, path_class
from gpufabric.testbed.names import IFNAMSIZ, MAX_NODES, OUR_INTERFACE, new_run_id, run_of_namespace


def test_every_interface_name_fits_ifnamsiz_and_is_recognised_as_ours() -> None:
    names = BedNames(new_run_id())
    last = MAX_NODES - 1
    for name in (names.interface(last), names.port(last), names.bridge):
        assert len(name) <= IFNAMSIZ and OUR_INTERFACE.match(name), name
    assert run_of_namespace(names.namespace(last)) == names.run_id
    assert run_of_namespace(names.bridge_namespace) == names.run_id
    # Someone else's namespace, even one that starts like ours, is never ours to sweep.
    assert run_of_namespace("gft-prod") is None and run_of_namespace("gft12345z-n0") is None


def test_a_public_range_is_refused_in_one_line() -> None:
    with pytest.raises(UsageError, match="private IPv4 range"):
        BedNames("abcdef", subnet="8.8.8.0/24").address(0)
    assert BedNames("abcdef").address(3) == "10.213.0.4"


def test_a_slow_path_is_one_htb_class_per_end_under_the_nic_rate() -> None:
    names = BedNames("abcdef")
    faults = [SlowPath(nodes=(1, 2), rate_mbit=40), SlowNic(node=2, rate_mbit=150)]
    egress = [" ".join(c) for c in egress_commands(names, 1, 200, faults)]
    assert any(f"classid {path_class(2)} htb rate 40mbit ceil 40mbit" in c for c in egress)
    assert any(f"match ip dst {names.address(2)}/32 flowid {path_class(2)}" in c for c in egress)
    assert any("classid 1:1 htb rate 200mbit" in c for c in egress)
    # The slow NIC of node 2 caps its default class and what it receives; node 3 gets the bed's tbf.
    assert any("classid 1:1 htb rate 150mbit" in " ".join(c) for c in egress_commands(names, 2, 200, faults))
    assert ingress_commands(names, 2, 200, faults)[0][6:9] == ["tbf", "rate", "150mbit"]
    assert [c[6:9] for c in egress_commands(names, 3, 200, faults)] == [["tbf", "rate", "200mbit"]]
    assert egress_commands(names, 3, None, faults) == []
