"""A slow link on real ranks: ``GPUFABRIC_FAULT=slowlink:ranks=A,B:delay_ms=D`` and isolate telling it
from a slow node.

The fault delays ranks A and B before every timed call of a communicator that holds both (isolate's
group rounds give each group its own), and nowhere else: the two ends are fast beside anyone else,
exactly what a degraded link between two healthy nodes looks like. The CPU run uses 4 gloo ranks
with ``--link-sweep`` (4 nodes: the pairs not yet met, in pair rounds, which gloo's pairs can be
judged against), the floor of ``test_real_isolate.py`` (a quarter of the best screen group) and its
200 ms delay.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from gpufabric.bench.config import BenchConfig
from gpufabric.bench.fault import check_world, parse_fault, slowed_launch, timing_under
from gpufabric.cli.app import main
from gpufabric.errors import UsageError


def test_the_link_fault_parses_and_delays_only_a_group_holding_both_ends() -> None:
    fault = parse_fault("slowlink:ranks=1,3:delay_ms=20")
    assert (fault.kind, fault.rank, fault.peer, fault.delay_ms) == ("slowlink", 1, 3, 20.0)
    assert parse_fault(fault.spec) == fault and fault.spec == "slowlink:ranks=1,3:delay_ms=20"
    assert fault.delay_s_on(1, [1, 3]) == fault.delay_s_on(3, [0, 3, 1]) == 0.02
    assert fault.delay_s_on(1, [1, 2]) is None and fault.delay_s_on(0, [0, 1, 3]) is None
    assert fault.delay_s_on(3) == 0.02  # one communicator of the whole world holds both ends
    assert slowed_launch(fault, 1, lambda: None, lambda: None, group=[1, 0]) is None
    assert slowed_launch(fault, 1, lambda: None, lambda: None, group=[1, 3]) is not None
    assert not timing_under(fault, BenchConfig(hold_stream=True)).hold_stream


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("slowlink:ranks=2,2:delay_ms=5", "two different ranks"),
        ("slowlink:ranks=1:delay_ms=5", "is not a fault"),
        ("slowlink:ranks=1,2", "is not a fault"),
        ("slowlink:ranks=1,2:delay_ms=0", "delay_ms must be above 0"),
    ],
)
def test_a_bad_link_fault_is_one_line(text: str, named: str) -> None:
    with pytest.raises(UsageError, match=named):
        parse_fault(text)


def test_both_ends_must_exist() -> None:
    with pytest.raises(UsageError, match=r"names rank 5, but ranks are 0\.\.3"):
        check_world(parse_fault("slowlink:ranks=1,5:delay_ms=5"), 4)
    check_world(parse_fault("slowlink:ranks=1,3:delay_ms=5"), 4)


@pytest.mark.slow
def test_a_slow_link_between_real_ranks_is_convicted_as_a_link(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    fault = "slowlink:ranks=1,3:delay_ms=200"
    monkeypatch.setenv("GPUFABRIC_FAULT", fault)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")  # as on a GPU host: --backend gloo keeps it CPU
    run_dir = tmp_path / "isolate"
    args = ["--nodes", "4", "--ranks", "4", "--backend", "gloo", "--link-sweep", "--min-drop", "0.75",
            "--iters", "10", "--run-dir", str(run_dir), "--format", "json"]  # fmt: skip
    monkeypatch.setattr(sys, "argv", ["gpufabric", "isolate", *args])
    with pytest.raises(SystemExit) as exit_info:
        main()
    out, err = capsys.readouterr()
    assert exit_info.value.code == 1, err  # a conviction
    data = json.loads(out)
    report = data["report"]
    convicted = [(s["kind"], s["nodes"]) for s in report["suspects"] if s["verdict"] == "convicted"]
    assert convicted == [("link", ["node0001", "node0003"])], report["suspects"]
    assert report["verdicts"]["node0001"] == report["verdicts"]["node0003"] == "bad-link"
    assert report["verdicts"]["node0000"] == report["verdicts"]["node0002"] == "ok"
    assert data["fault"] == fault
    (suspect,) = [s for s in report["suspects"] if s["verdict"] == "convicted"]
    assert "each end healthy with others" in suspect["reason"]
    # every group holding both ends was slowed on their ranks, and no other group was
    for round_dir in data["round_dirs"]:
        for group in json.loads((Path(round_dir) / "round.json").read_text())["groups"]:
            both = {1, 3} <= set(group["ranks"])
            assert (min(group["samples_us"]) >= 190e3) == both, group
