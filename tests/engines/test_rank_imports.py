"""The engines' rank programs start fast: every rank of a job imports its module before it can join, so
a rank imports no launcher, no runner, no mode and no analysis, and neither engine imports the other.
The torch engine's rank leaves torch until it runs, the NCCL engine's never imports it.

Each import runs in a fresh interpreter, as a launcher starts a rank.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from gpufabric.engines import RANK_MODULES, rank_module

# What only the parent needs: launchers, the sweep's runner and its failure readers, the modes, the CLI,
# the analysis of logs and results (NCCL-log reading too, wherever it lives), the nccl-tests driver.
PARENT_ONLY = (
    "gpufabric.launch",
    "gpufabric.bench.runner",
    "gpufabric.bench.failure",
    "gpufabric.jobs",
    "gpufabric.cli",
    "gpufabric.analysis",
    "gpufabric.nccl_logs",
    "gpufabric.engines.nccl_tests",
)


def _imported_by(module: str) -> list[str]:
    probe = f"import json, sys, {module}; print(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    loaded: list[str] = json.loads(done.stdout)
    return loaded


@pytest.mark.parametrize("engine", ["nccl", "torch"])
def test_a_rank_imports_nothing_the_parent_alone_needs(engine: str) -> None:
    loaded = _imported_by(RANK_MODULES[engine])
    other = RANK_MODULES["torch" if engine == "nccl" else "nccl"].rsplit(".", 1)[0]
    assert [m for m in loaded if m.startswith(PARENT_ONLY)] == []
    assert [m for m in loaded if m == other or m.startswith(other + ".")] == []
    assert "torch" not in loaded


def test_each_resolved_engine_runs_its_own_rank_module() -> None:
    assert rank_module("nccl") == "gpufabric.engines.nccl.rank"
    assert rank_module("torch") == "gpufabric.engines.torch.rank"
