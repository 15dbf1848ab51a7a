"""``judge``: the verdicts and the causes of a shortfall, worded in one line."""

from __future__ import annotations

import pytest

from gpufabric.analysis.expected.run_evidence import run_evidence
from gpufabric.analysis.expected.setting import RunSetting
from gpufabric.expect import Evidence, expect, judge, shape_from_instance
from gpufabric.results.model import Measurement, Row

P4D_2N = expect(shape_from_instance("p4d.24xlarge"), "all_reduce", 2)  # NET tree, ceiling 93.75 GB/s


def test_a_healthy_figure_is_within_with_both_percentages() -> None:
    verdict = judge(77.9, P4D_2N)
    assert verdict.verdict == "within"
    assert verdict.percent_of_ceiling == pytest.approx(83.1)
    assert verdict.message.startswith("all_reduce 77.9 GB/s: within the expected")
    assert "\n" not in verdict.message


def test_a_quarter_of_expected_on_4_nics_reads_as_one_nic() -> None:
    verdict = judge(20.31, P4D_2N)
    assert verdict.verdict == "below"
    assert verdict.causes[0] == "one-nic"
    assert "likely cause: busbw near 1/4 of expected: traffic on 1 of 4 NICs" in verdict.message


def test_far_below_the_fabric_reads_as_sockets() -> None:
    verdict = judge(8.2, P4D_2N)
    assert verdict.causes == ("socket-fallback",)
    assert "TCP sockets instead of RDMA" in verdict.message


def test_evidence_names_the_cause_for_certain() -> None:
    evidence = Evidence(transports=frozenset({"socket"}), nics_used=1, nics_available=4, gdr=False)
    verdict = judge(30.0, P4D_2N, evidence)
    assert verdict.causes == ("socket-fallback", "one-nic", "no-gdr")
    assert "; cause: NCCL used TCP sockets" in verdict.message


@pytest.mark.parametrize(
    ("evidence", "cause", "words"),
    [
        (Evidence(ranks_per_node=7, gpus_per_node=8), "missing-gpu", "7 of 8 GPUs per node took part"),
        (Evidence(slow_rank=5), "slow-rank", "rank 5 is slower than its peers"),
        (
            Evidence(slow_rank=2, slow_rank_words="host h2, GPU 2: 77.0 us of each 100.0 us iteration"),
            "slow-rank",
            "rank 2 is slower than its peers and sets the pace (host h2, GPU 2: 77.0 us of each",
        ),
        (Evidence(nics_used=2, nics_available=4), "one-nic", "traffic on 2 of 4 NICs"),
        (
            Evidence(launch_issue_us=10.4),
            "launch-bound",
            "the GPUs waited for the hosts' calls, or nearly (10.4 us to issue each): the time is the host's",
        ),
    ],
)
def test_each_evidence_cause(evidence: Evidence, cause: str, words: str) -> None:
    verdict = judge(40.0, P4D_2N, evidence)
    assert verdict.causes == (cause,)
    assert words in verdict.message


def test_pcie_instead_of_nvlink() -> None:
    nvlink = expect(shape_from_instance("p5.48xlarge"), "all_reduce", 1)
    verdict = judge(40.0, nvlink, Evidence(transports=frozenset({"shm", "pcie"})))
    assert verdict.causes == ("pcie-bound",)


def test_above_the_ceiling_is_suspicious() -> None:
    verdict = judge(120.0, P4D_2N)
    assert verdict.verdict == "above-ceiling"
    assert "suspicious" in verdict.message


def test_a_shortfall_without_a_pattern_says_where_to_look() -> None:
    verdict = judge(60.0, P4D_2N)
    assert verdict.verdict == "below"
    assert verdict.causes == ()
    assert "no cause stands out" in verdict.message


def test_a_launch_bound_row_gives_its_hosts_issue_time_as_evidence() -> None:
    # The row judged is the out-of-place one; launch-bound from 90% of its time (Measurement.launch_bound).
    def row(issue_us: float | None) -> Row:
        m = Measurement(time_us=11.0, algbw_gbs=0.1, busbw_gbs=0.1, issue_us=issue_us)
        return Row(size_bytes=1 << 10, count=256, dtype="float", out_of_place=m)

    setting, shape = RunSetting(nodes=1, hosts=1), shape_from_instance("p5.48xlarge")
    bound = run_evidence(setting, None, shape, row(10.4))
    assert bound is not None and bound.launch_issue_us == 10.4
    paced = run_evidence(setting, None, shape, row(5.0))  # the GPUs set the time: no such evidence
    assert paced is None or paced.launch_issue_us is None
    unknown = run_evidence(setting, None, shape, row(None))  # nccl-tests' rows, the torch engine's
    assert unknown is None or unknown.launch_issue_us is None
