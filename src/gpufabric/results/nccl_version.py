"""NCCL's version as NCCL prints it, the one pattern of it:

    NCCL version 2.26.6+cuda12.8                              nccl-tests' rank 0; NCCL's INFO line (2.20+)
    NCCL error in: ...ProcessGroupNCCL.cpp:1269, unhandled system error, NCCL version 2.14.3      torch
    NCCL version 2.28.9+cuda12.9 compiled with CUDA 12.9      RAS's text report (src/ras/client_support.cc)

Read by the table reader (``readers/nccl_header``), the NCCL log attestation (``nccl_logs``) and the RAS
text reader (``nccl_native/ras_text``). A leaf, so that those packages read it without importing each
other. (``capabilities/libnccl`` reads the banner compiled into the library's bytes, with its CUDA part.)
"""

from __future__ import annotations

import re

NCCL_VERSION = re.compile(r"NCCL version (?P<version>\d+\.\d+\.\d+[\w.+\-]*)")


def nccl_version(line: str) -> str | None:
    """``2.26.6+cuda12.8`` from the first ``NCCL version ...`` in ``line``; None without one."""
    match = NCCL_VERSION.search(line)
    return match["version"] if match else None
