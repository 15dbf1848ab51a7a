"""The CLI must start without the optional extras (torch, kubernetes) and without paying for matplotlib.

`pip install gpufabric` without extras, and the GPU hosts (which carry torch but no kubernetes client), both
run `gpufabric ...`; only the commands that need a heavy library import it.
"""

from __future__ import annotations

import subprocess
import sys

HEAVY = (
    "torch", "kubernetes", "kubernetes_validate", "urllib3", "jsonschema", "matplotlib", "botocore", "google",
    "nccl", "cuda",
)  # fmt: skip


def test_cli_import_pulls_in_no_optional_or_heavy_library() -> None:
    probe = (
        "import sys, gpufabric.cli.app\n"
        f"heavy = {HEAVY!r}\n"
        "print(sorted({m.split('.')[0] for m in sys.modules if m.split('.')[0] in heavy}))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
