"""NCCL lines as log collectors hand them over: the text a collector wrapped around each line.

Two shapes reach the doctor:

- a prefix in front of NCCL's own ``host:pid:tid [dev] NCCL INFO`` header, or in place of it: journald's
  ``Jun 05 12:00:01 node1 python3[1234]:``, the CRI format of Kubernetes nodes
  (``2024-06-05T12:00:01.123456789Z stdout F``), ``kubectl logs --timestamps``, PyTorch's ``[rank0]:``,
  torchrun's ``--tee`` tag ``[default0]:``, mpirun's ``[1,0]<stdout>:``, Ray's ``(RayTrainWorker pid=950,
  ip=...)``, pdsh's ``10.3.35.83:``, or a header cut down to ``[4] NCCL INFO`` (NVIDIA/nccl#385). These need
  nothing here: a line is located by its NCCL marker, never by its start, and the host is read from the
  tokens just before the marker (``patterns.split_header``);
- one JSON object per line, the NCCL line being one of its string fields: Docker's json-file driver
  (``{"log": "...\\n", "stream": "stdout", "time": ...}``), Fluent Bit / Fluentd shippers (``log`` or
  ``message``), Google Cloud Logging exports (``textPayload``), ``journalctl -o json`` (``MESSAGE``). Those
  are unwrapped here, before the line is read.
"""

from __future__ import annotations

import json
from typing import Any

# The field each collector puts the line in, most common first.
_TEXT_FIELDS = ("log", "message", "msg", "MESSAGE", "textPayload", "line", "text")
# A JSON log line is short; a longer "line" is not one collector record (and is not parsed whole).
_MAX_RECORD = 64 * 1024
_WORTH_READING = ("NCCL", "Rank")  # what the attestation reads: NCCL lines and nccl-tests' rank block


def unwrap_collector_line(text: str) -> str | None:
    """The NCCL line inside a collector's JSON record, or None when ``text`` is not such a record."""
    stripped = text.strip()
    if not stripped.startswith("{") or len(stripped) > _MAX_RECORD:
        return None
    if not any(word in stripped for word in _WORTH_READING):
        return None
    try:
        record = json.loads(stripped)
    except (ValueError, RecursionError):
        return None
    if not isinstance(record, dict):
        return None
    inner = _text_field(record)
    if inner is None:
        return None
    # One record holds one line; a record carrying several keeps the first one NCCL wrote.
    lines = inner.splitlines() or [""]
    return next((line for line in lines if any(w in line for w in _WORTH_READING)), lines[0])


def _text_field(record: dict[str, Any]) -> str | None:
    for name in _TEXT_FIELDS:
        value = record.get(name)
        if isinstance(value, str):
            return value
    # A shipper that nests the line (``{"jsonPayload": {"message": ...}}``): one level down, same names.
    for value in record.values():
        if isinstance(value, dict):
            for name in _TEXT_FIELDS:
                inner = value.get(name)
                if isinstance(inner, str):
                    return inner
    return None
