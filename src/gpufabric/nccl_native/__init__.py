"""NCCL's own diagnostics, read by gpufabric: RAS (a running job's state over its client socket,
``ras_client``, read into ``ras_model`` by ``ras_json``/``ras_text``; ``suspects`` turns it into an
accusation for ``isolate``), the Inspector profiler plugin's per-collective timings (``inspector``), and
the init diagnostics of NCCL 2.31+ (``diagnostics``: NCCL_RUN_DIAGNOSTICS's ``NCCL DIAG`` lines).

Rendering is ``gpufabric.report.ras_render``; the command is ``gpufabric watch`` (``cli/watch.py``).
"""

from gpufabric.nccl_native.diagnostics import (
    DIAGNOSTICS_ENV,
    NcclDiagnostics,
    diagnostics_note,
    enable_diagnostics,
    has_diagnostics,
    read_diagnostics,
)
from gpufabric.nccl_native.inspector import InspectorSummary, inspector_files, read_inspector
from gpufabric.nccl_native.ras_client import (
    RasAddress,
    query_diagnostics,
    query_status,
    ras_address,
)
from gpufabric.nccl_native.ras_json import parse_ras_json
from gpufabric.nccl_native.ras_model import RasStatus
from gpufabric.nccl_native.ras_text import parse_ras_text
from gpufabric.nccl_native.suspects import Accusation, accuse
from gpufabric.nccl_native.watch import RasWatch, watch_job

__all__ = [
    "DIAGNOSTICS_ENV",
    "Accusation",
    "InspectorSummary",
    "NcclDiagnostics",
    "RasAddress",
    "RasStatus",
    "RasWatch",
    "accuse",
    "diagnostics_note",
    "enable_diagnostics",
    "has_diagnostics",
    "inspector_files",
    "parse_ras_json",
    "parse_ras_text",
    "query_diagnostics",
    "query_status",
    "ras_address",
    "read_diagnostics",
    "read_inspector",
    "watch_job",
]
