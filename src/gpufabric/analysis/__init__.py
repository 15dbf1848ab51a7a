"""Reading what ran: NCCL's debug logs into an attestation (``attest_files``), doctor, compare, the A/B
and tune judges, isolate's search."""

from gpufabric.analysis.nccl_log import attest_files
from gpufabric.analysis.tune import judge_tune, tune_markdown

__all__ = ["attest_files", "judge_tune", "tune_markdown"]
