"""Every promised install works: fresh virtualenvs with ``pip install gpufabric[EXTRA]`` (``conftest.py``),
each running the commands its flavour promises (README.md, Install).

- plain: the CLI, readers, compare, report, catalog, planner, doctor, ``isolate --simulate``, dry runs; the
  commands that need an extra say which in one line and exit 2.
- ``[kubernetes]``: ``nodes`` against a local API endpoint through the real client; manifests checked.
- ``[torch]``: a real 2-rank gloo ``bench`` and ``train-bench`` on this CPU.
- ``[gpu]``: nccl4py and cuda-bindings (the direct engine's imports) install and are seen by ``gpufabric
  env`` (no GPU here to run them).
- ``[all]``: resolved with ``pip install --dry-run`` (installing it would add ~1 GB of CUDA wheels to what
  the flavours above already prove); the resolution must bring every extra's packages.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from venvs import Venv, clean_env, resolved_names, tail, torch_pins, version_of

pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).parent.parent / "fixtures"
NVLINK = FIXTURES / "gpu_h200x4" / "bench_allreduce_nvlink.json"
SOCKET = FIXTURES / "gpu_h200x4" / "bench_allreduce_socket.json"
TRAIN_AB = FIXTURES / "gpu_h200x4" / "train_ddp_ab.json"
NCCL_TESTS_LOG = FIXTURES / "nccl_tests" / "seed003_gib_rdma_h200_all_gather.log"
EFA_LOG = FIXTURES / "nccl_logs" / "ofi889_efa_p4d_cloudwatch.log"
TASK = FIXTURES / "launch" / "show_env.yaml"
EFA_TASK = FIXTURES / "launch" / "nccl_efa.yaml"

sys.path.insert(0, str(Path(__file__).parent.parent / "inventory"))
from kube_api import running_api_server  # noqa: E402 - the inventory tests' recorded nodes endpoint

PLAIN_RUNS: dict[str, tuple[list[str], str]] = {
    # name: (arguments, a text its stdout must hold)
    "help": (["--help"], "train-bench"),
    "env": (["env"], "torch engine"),
    "show our JSON": (["show", str(NVLINK)], "all_reduce"),
    "show a nccl-tests log": (["show", str(NCCL_TESTS_LOG)], "all_gather"),
    "compare": (["compare", str(NVLINK), str(SOCKET)], "Speed-up"),
    "report": (["report", str(NVLINK), str(SOCKET), "--out", "report.html"], ""),
    "train-bench --show": (["train-bench", "--show", str(TRAIN_AB)], "tokens/s"),
    "catalog": (["catalog"], "p4d.24xlarge"),
    "catalog one shape": (["catalog", "show", "p5.48xlarge"], "efa"),
    "plan": (["plan", "-t", "p4d.24xlarge", "--platform", "kubernetes"], "vpc.amazonaws.com/efa"),
    "doctor a log": (["doctor", str(EFA_LOG)], "NET/OFI selected provider efa"),
    "doctor a result": (["doctor", str(NVLINK)], ""),
    "isolate --simulate": (["isolate", "--simulate", "--nodes", "8"], "node"),
    "launch --dry-run": (["launch", str(TASK), "--dry-run"], "launcher: local"),
    "launch --on kubernetes --dry-run": (
        ["launch", str(EFA_TASK), "--on", "kubernetes", "--dry-run"],
        "kind: Job",
    ),
    "bench --dry-run": (["bench", "--dry-run", "--ranks", "2", "-e", "1K"], "gpufabric.engines.torch.rank"),
}

PLAIN_REFUSALS: dict[str, tuple[list[str], str]] = {
    "bench": (["bench", "--ranks", "2", "-e", "1K"], "torch"),
    "train-bench": (["train-bench", "--ranks", "2"], "torch"),
    "isolate": (["isolate", "--nodes", "2"], "torch"),
    "nodes": (["nodes"], "kubernetes"),
    "plan --from-cluster": (["plan", "--from-cluster"], "kubernetes"),
    "launch --on kubernetes": (["launch", str(EFA_TASK), "--on", "kubernetes"], "kubernetes"),
}


def no_traceback(result: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in result.stderr + result.stdout, result.stderr


def capabilities(venv: Venv, cwd: Path) -> dict[str, dict[str, object]]:
    result = venv.gpufabric("env", "--format", "json", cwd=cwd)
    assert result.returncode == 0, result.stderr
    return {c["name"]: c for c in json.loads(result.stdout)["capabilities"]}


@pytest.mark.parametrize("case", list(PLAIN_RUNS))
def test_plain_install_runs_every_command_that_needs_no_extra(
    case: str, venvs: dict[str, Venv], tmp_path: Path
) -> None:
    args, expected = PLAIN_RUNS[case]
    result = venvs["plain"].ready().gpufabric(*args, cwd=tmp_path)
    no_traceback(result)
    assert result.returncode == 0, f"{case}: exit {result.returncode}\n{tail(result.stderr)}"
    assert expected in result.stdout, tail(result.stdout)
    if case == "report":
        assert (tmp_path / "report.html").read_text(encoding="utf-8").count("<svg") >= 1  # matplotlib ran


def test_plain_install_prints_its_version(
    venvs: dict[str, Venv], gpufabric_wheel: Path, tmp_path: Path
) -> None:
    result = venvs["plain"].ready().gpufabric("--version", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"gpufabric {version_of(gpufabric_wheel)}\n"


@pytest.mark.parametrize("case", list(PLAIN_REFUSALS))
def test_plain_install_names_the_missing_extra_in_one_line(
    case: str, venvs: dict[str, Venv], tmp_path: Path
) -> None:
    args, extra = PLAIN_REFUSALS[case]
    result = venvs["plain"].ready().gpufabric(*args, cwd=tmp_path)
    no_traceback(result)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 2, f"{case}: exit {result.returncode}\n{tail(result.stderr)}"
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    assert f'pip install "gpufabric[{extra}]"' in lines[0]


def test_plain_install_lists_no_engine_and_no_client(venvs: dict[str, Venv], tmp_path: Path) -> None:
    found = capabilities(venvs["plain"].ready(), tmp_path)
    for name, extra in (
        ("torch engine", "torch"),
        ("kubernetes client", "kubernetes"),
        ("gpu engine", "gpu"),
    ):
        assert found[name]["installed"] is False
        assert found[name]["how_to_add"] == f'pip install "gpufabric[{extra}]"'


def test_kubernetes_extra_lists_nodes_through_the_real_client(venvs: dict[str, Venv], tmp_path: Path) -> None:
    venv = venvs["kubernetes"].ready()
    with running_api_server() as api:
        api.serve_file(FIXTURES / "inventory" / "hyperpod_p4d_seed000.json")
        config = api.kubeconfig(tmp_path / "kubeconfig")
        result = venv.gpufabric("nodes", "--kubeconfig", str(config), "--format", "json", cwd=tmp_path)
    no_traceback(result)
    assert result.returncode == 0, tail(result.stderr)
    nodes = json.loads(result.stdout)["nodes"]
    assert nodes and all(n["node"]["instance_type"] == "ml.p4d.24xlarge" for n in nodes), nodes[:1]
    assert api.requests and api.requests[0]["path"] == "/api/v1/nodes"


def test_kubernetes_extra_checks_manifests(venvs: dict[str, Venv], tmp_path: Path) -> None:
    venv = venvs["kubernetes"].ready()
    result = venv.gpufabric("launch", str(EFA_TASK), "--on", "kubernetes", "--dry-run", cwd=tmp_path)
    assert result.returncode == 0, tail(result.stderr)
    assert "kind: Job" in result.stdout and "not schema-checked" not in result.stdout
    found = capabilities(venv, tmp_path)
    assert found["kubernetes client"]["installed"] is True
    assert found["manifest schema check"]["installed"] is True
    assert found["torch engine"]["installed"] is False


def test_torch_extra_runs_the_engine_on_cpu_ranks(venvs: dict[str, Venv], tmp_path: Path) -> None:
    venv = venvs["torch"].ready()
    bench = venv.gpufabric(
        "bench", "--ranks", "2", "-e", "1K", "-f", "4", "--format", "json", "--run-dir", "bench", cwd=tmp_path
    )
    no_traceback(bench)
    assert bench.returncode == 0, tail(bench.stderr)
    result = json.loads(bench.stdout)
    assert result["complete"] is True and result["metadata"]["world_size"] == 2
    assert result["metadata"]["backend"] == "gloo"
    assert len(result["series"][0]["rows"]) >= 3 and result["series"][0]["wrong_total"] == 0
    found = capabilities(venv, tmp_path)
    assert found["torch engine"]["installed"] is True
    assert str(found["torch engine"]["version"]).startswith("torch ")


def test_torch_extra_runs_train_bench(venvs: dict[str, Venv], tmp_path: Path) -> None:
    venv = venvs["torch"].ready()
    result = venv.gpufabric(
        "train-bench", "--ranks", "2", "--steps", "2", "--warmup-steps", "1", "--probe-iters", "2",
        "--no-scaling", "--format", "json", "--run-dir", "train", cwd=tmp_path,
    )  # fmt: skip
    no_traceback(result)
    assert result.returncode == 0, tail(result.stderr)
    document = json.loads(result.stdout)
    assert document["complete"] is True and document["world_size"] == 2
    assert len(document["step"]["samples_ms"]) == 2  # --steps 2, each timed


def test_gpu_extra_installs_the_direct_engines_bindings(venvs: dict[str, Venv], tmp_path: Path) -> None:
    venv = venvs["gpu"].ready()
    found = capabilities(venv, tmp_path)
    gpu = found["gpu engine"]
    assert gpu["installed"] is True, gpu
    assert "nccl4py 0." in str(gpu["version"]) and "cuda-bindings " in str(gpu["version"]), gpu
    assert found["torch engine"]["installed"] is False
    # The extra carries cuda-bindings, which nccl4py leaves to its cu12/cu13 extras; engines/nccl imports it.
    imported = venv.python(
        "import cuda.bindings, importlib.metadata as m; print(m.version('cuda-bindings'))", cwd=tmp_path
    )
    assert imported.returncode == 0, imported.stderr


def test_all_extra_resolves_to_every_extra(
    venvs: dict[str, Venv], gpufabric_wheel: Path, tmp_path: Path
) -> None:
    names = resolved_names("all", lambda report: resolve_all(venvs["plain"].ready(), gpufabric_wheel, report))
    assert {"torch", "kubernetes", "kubernetes-validate", "nccl4py", "cuda-core", "cuda-bindings"} <= names


def resolve_all(venv: Venv, wheel: Path, report: Path) -> None:
    """``pip install --dry-run`` of ``gpufabric[all]`` in a clean venv; the resolution goes to ``report``."""
    argv = [
        str(venv.bin / "python"), "-m", "pip", "install", "--dry-run", "--ignore-installed", "-q",
        "--report", str(report), *torch_pins(), f"{wheel}[all]",
    ]  # fmt: skip
    result = subprocess.run(argv, capture_output=True, text=True, env=clean_env(), timeout=540, check=False)
    assert result.returncode == 0, tail(result.stderr)
