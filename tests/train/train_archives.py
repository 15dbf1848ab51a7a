"""The GPU calls' archives under benchmarks/results: a document inside an archive inside another (each
call brought back one archive holding the harness's per-scenario archives, which hold the runs)."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results"


def archived_member(chain: tuple[str, ...]) -> bytes:
    """The bytes of the last member of ``chain``: an archive under RESULTS, then members, each an archive
    but the last."""
    data = (RESULTS / chain[0]).read_bytes()
    for member in chain[1:]:
        with tarfile.open(fileobj=io.BytesIO(data)) as archive:
            found = archive.extractfile(member)
            assert found is not None, f"{member} in {chain}"
            data = found.read()
    return data
