"""Judging what ran (the NCCL logs' attestation is read by ``gpufabric.nccl_logs``): the doctor on runs
(``doctor``) and on this node (``preflight``), compare (``compare_runs``; from files, ``compare_files``),
the A/B and tune judges, isolate's search (``analysis.isolate``).

The documents they return (``DoctorReport``, ``Comparison``, ``TuneReport``, ``ABReport``, and isolate's
``IsolationReport``, exported by ``analysis.isolate``) render through ``gpufabric.report``.
"""

from typing import TYPE_CHECKING

from gpufabric._lazy import lazy_package

if TYPE_CHECKING:  # the public names, each imported on first use (gpufabric._lazy)
    from gpufabric.analysis.ab_judge import ABReport
    from gpufabric.analysis.compare import compare_runs, without_empty_tables
    from gpufabric.analysis.compare_files import FileComparison, compare_files
    from gpufabric.analysis.compare_model import PLACEMENT_NAMES, Comparison, Placement
    from gpufabric.analysis.doctor import EXPECT_CHOICES, DoctorReport, Verdict, doctor
    from gpufabric.analysis.preflight import preflight
    from gpufabric.analysis.tune_judge import TuneReport, judge_tune
lazy_package(__name__)

__all__ = [
    "EXPECT_CHOICES",
    "PLACEMENT_NAMES",
    "ABReport",
    "Comparison",
    "DoctorReport",
    "FileComparison",
    "Placement",
    "TuneReport",
    "Verdict",
    "compare_files",
    "compare_runs",
    "doctor",
    "judge_tune",
    "preflight",
    "without_empty_tables",
]
