"""What users read names the public guides, never the file names the catalog keeps their copies under;
``catalog show`` prints a table by default (its --format's default), YAML and JSON on request."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from gpufabric.catalog.model import Provenance, public_source

CLI = [sys.executable, "-m", "gpufabric.cli", "catalog"]
INTERNAL = re.compile(r"[0-9]{3}_[0-9a-f]{16}|\bseeds?\b", re.IGNORECASE)


def _run(*args: str) -> str:
    proc = subprocess.run([*CLI, *args], capture_output=True, text=True, check=False, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.mark.parametrize("shape", ["p4d.24xlarge", "p3dn.24xlarge", "a3-highgpu-8g", "dl1.24xlarge"])
@pytest.mark.parametrize("fmt", [None, "yaml", "json"])
def test_catalog_show_names_public_guides(shape: str, fmt: str | None) -> None:
    out = _run("show", shape, *(["--format", fmt] if fmt else []))
    assert INTERNAL.search(out) is None, INTERNAL.search(out)
    if fmt == "json":
        json.loads(out)


def test_catalog_show_default_is_a_table() -> None:
    out = _run("show", "p4d.24xlarge")
    assert out.startswith("| Fact")
    assert "| source" in out and "SkyPilot's EFA guide" in out


def test_seed_words_become_the_guides_names() -> None:
    assert (
        public_source("about 3x FI_PROVIDER=tcp (seed 002)")
        == "about 3x FI_PROVIDER=tcp (AWS's P3dn EFA blog)"
    )
    assert str(Provenance(kind="seed", ref="003_6daea02de48545cc.txt")) == (
        "public guide: SkyPilot's GCP/GKE GPU networking guide"
    )


@pytest.mark.parametrize("fmt", ["yaml", "json", "table"])
def test_plan_names_public_guides(fmt: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "gpufabric.cli", "plan", "--cloud", "aws", "--instance-type", "p4d.24xlarge",
         "--platform", "vm", "--format", fmt],
        capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert INTERNAL.search(proc.stdout) is None, INTERNAL.search(proc.stdout)
