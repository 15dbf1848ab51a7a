"""Every result judged against what its hardware should reach: the run's node shapes (``shapes_of_run``),
its layout (``run_setting``) and evidence (``run_evidence``), and each size judged (``judge_run``,
``expect_run``) with ``gpufabric.expect``. bench, bench --ab, bench --self-test, doctor, report and compare
call ``expect_run``; the renderers print the ``RunExpectation`` it returns (``report.expected_lines``).
"""

from gpufabric.analysis.expected.given import GivenShape, given_shape
from gpufabric.analysis.expected.judge_run import (
    CPU_NOTE,
    expect_run,
    judge_run,
    route,
    shapes_words,
    with_expected,
)
from gpufabric.analysis.expected.run_evidence import run_evidence
from gpufabric.analysis.expected.setting import RunSetting, run_setting
from gpufabric.analysis.expected.shapes import partial_shape, physical_host, run_hosts, shapes_of_run

__all__ = [
    "CPU_NOTE",
    "GivenShape",
    "RunSetting",
    "expect_run",
    "given_shape",
    "judge_run",
    "partial_shape",
    "physical_host",
    "route",
    "run_evidence",
    "run_hosts",
    "run_setting",
    "shapes_of_run",
    "shapes_words",
    "with_expected",
]
