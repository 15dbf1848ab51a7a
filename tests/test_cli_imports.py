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


# `gpufabric --help` lists every command, so it imports every command module; each imports its work
# (readers, judges, renderers, launchers) only when it runs. Which modules load, never how long it takes:
# the time is benchmarks/import_time.py's.
HELP_PROBE = (
    "import runpy, sys\n"
    "sys.argv = ['gpufabric', '--help']\n"
    "try:\n"
    "    runpy.run_module('gpufabric.cli', run_name='__main__')\n"
    "except SystemExit:\n"
    "    pass\n"
    "print('MODULES', ' '.join(sorted(sys.modules)))\n"
)
NOT_FOR_HELP = ("numpy", "matplotlib", "torch", "yaml", "nccl", "cuda")
# The layers that do a command's work: none is needed to print its flags.
WORK_LAYERS = (
    "gpufabric.analysis.", "gpufabric.engines.", "gpufabric.results.", "gpufabric.jobs.",
    "gpufabric.hardware.", "gpufabric.report.renderers", "gpufabric.launch.registry",
    "gpufabric.bench.runner",
)  # fmt: skip


def test_help_imports_no_numpy_matplotlib_torch_nor_any_command_s_work() -> None:
    out = subprocess.run([sys.executable, "-c", HELP_PROBE], capture_output=True, text=True, check=True)
    assert "Usage:" in out.stdout  # the probe really printed the help
    modules = out.stdout.rsplit("MODULES ", 1)[1].split()
    assert "gpufabric.cli.bench" in modules  # and really imported the command modules
    assert sorted({m.split(".")[0] for m in modules} & set(NOT_FOR_HELP)) == []
    assert [m for m in modules if m.startswith(WORK_LAYERS)] == []
