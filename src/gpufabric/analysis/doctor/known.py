"""NCCL and plugin warnings that are harmless under a condition the log itself shows, each with that
condition and the public source that says so. The doctor lists them apart instead of failing on them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from gpufabric.analysis.doctor.evidence import Expectation
from gpufabric.catalog import FabricName
from gpufabric.results.attestation import Attestation


@dataclass(frozen=True)
class Known:
    pattern: re.Pattern[str]
    harmless: Callable[[Attestation, Expectation], bool]
    why: str  # the condition that makes it harmless, and where that is said


def _ib_unused(att: Attestation, exp: Expectation) -> bool:
    ib_off = att.nccl_env.get("NCCL_IB_DISABLE") == "1"
    expected_ib = exp.network == "ib"
    return ib_off or (not expected_ib and att.network_kind not in (None, "ib"))


def _no_efa_expected(att: Attestation, exp: Expectation) -> bool:
    return exp.fabric is not FabricName.EFA


def _always(att: Attestation, exp: Expectation) -> bool:
    return True


KNOWN: tuple[Known, ...] = (
    Known(
        re.compile(r"^Failed to open libibverbs\.so"),
        _ib_unused,
        "libibverbs is missing, which only matters for InfiniBand/RoCE: harmless with NCCL_IB_DISABLE=1 or "
        "when another network carries the traffic (NVIDIA/nccl#259)",
    ),
    Known(
        re.compile(r"^NET/OFI (?:Only EFA provider is supported|aws-ofi-nccl initialization failed)"),
        _no_efa_expected,
        "aws-ofi-nccl steps aside on a host without EFA and NCCL uses its own transports: harmless unless "
        "EFA is expected (aws/aws-ofi-nccl#174)",
    ),
    Known(
        re.compile(r"rx ctrl timeout cnt \d+"),
        _always,
        "GPUDirect-TCPX waiting for its peer's control message (slow first connection, NVIDIA/nccl#1652): "
        "a wait, not a failure, unless the job never progresses",
    ),
    Known(
        re.compile(r"^CollNet is not supported or fails to initialize, ignoring NCCL_ALGO=COLLNET"),
        _always,
        "NCCL ignores the CollNet request and runs its other algorithms",
    ),
)


def harmless_reason(message: str, att: Attestation, exp: Expectation) -> str | None:
    """Why ``message`` is harmless in this run, or None when it is not known to be."""
    for known in KNOWN:
        if known.pattern.search(message) and known.harmless(att, exp):
            return known.why
    return None
