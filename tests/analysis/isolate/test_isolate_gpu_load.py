"""isolate on 4 one-GPU nodes with a real load on one GPU (issue 33), for the lent 4-GPU machine.

The nodes are 4 ranks of one host, one GPU each, talking over NVLink: the path a GPU's own load slows.
With ``--virtual-nodes`` (NCCL_HOSTID per rank, NET/Socket between them, about 1.9 GB/s on 4x H200) a
matmul loop beside the search slowed no group at all (0 short groups in 3 rounds, heavy and light,
2026-11-27): that path is bound by the host's socket threads, not by the GPU.

A matmul loop runs in its own process on one GPU beside the search (not the test fault variable): heavy
(back to back) or light (busy 50 ms, idle 150 ms). The search must find that GPU's node as a **node**
(never a link that names a healthy node), in at most 2*ceil(log2 4)+2 = 6 rounds, and accuse nobody
else, in each of 3 runs under each load; a clean run first must accuse nobody. Measured on 4x H200
(2026-11-27) with each group test read at the median of 5 batches of 20 ms: heavy convicted node0003
in 4 rounds; light was missed (0 short groups after the screen: a load busy a quarter of the time slows
a minority of batches, which the median drops). GPU rounds now read the mean of the slowest tenth of
100 batches of 5 ms (``bench.group_statistic``). Each run prints its round log and suspects, for the
record in docs/benchmarks.md. About 6 minutes in all (7 searches of 3-6 rounds, one job of ~10 s a
round), so in two calls of about 3 minutes each:

    PYTEST_TIMEOUT=900 python -m pytest -m gpu -s -p no:cacheprovider \
        tests/analysis/isolate/test_isolate_gpu_load.py -k "clean or heavy"
    PYTEST_TIMEOUT=900 python -m pytest -m gpu -s -p no:cacheprovider \
        tests/analysis/isolate/test_isolate_gpu_load.py -k light
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.gpu, pytest.mark.multi_gpu]

LOADED_GPU = 3
ROUND_LIMIT = 6
# busy seconds, idle seconds per cycle: heavy never rests; light works a quarter of the time
LOADS = {"heavy": (1.0, 0.0), "light": (0.05, 0.15)}
LOAD_PROGRAM = """
import sys, time, torch
busy, idle = float(sys.argv[1]), float(sys.argv[2])
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
torch.cuda.synchronize()
print("ready", flush=True)
while True:
    end = time.monotonic() + busy
    while time.monotonic() < end:
        a @ b
        torch.cuda.synchronize()
    if idle:
        time.sleep(idle)
"""


def start_load(kind: str) -> subprocess.Popen[str]:
    busy, idle = LOADS[kind]
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": str(LOADED_GPU)}
    load = subprocess.Popen([sys.executable, "-c", LOAD_PROGRAM, str(busy), str(idle)], env=env,
                            stdout=subprocess.PIPE, text=True)  # fmt: skip
    assert load.stdout is not None and load.stdout.readline().strip() == "ready"
    return load


RUNS = 3
RUN_TIMEOUT_S = 150  # a run measured 41-47 s; far past that is a hang, and the whole file must stay short


def four_gpus() -> None:
    torch = pytest.importorskip("torch")
    if torch.cuda.device_count() < 4:
        pytest.skip("needs 4 CUDA GPUs")


def search(run_dir: Path) -> tuple[dict[str, Any], int, float]:
    """One ``gpufabric isolate --nodes 4`` on the GPUs: (its JSON document, exit code, wall seconds)."""
    # The lent machine's rule (no NVLink multicast); conftest scrubs NCCL_* from every test.
    env = {**os.environ, "NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
           "NVSHMEM_DISABLE_NVLS": "1"}  # fmt: skip
    env.pop("GPUFABRIC_FAULT", None)
    args = ["isolate", "--nodes", "4", "--run-dir", str(run_dir), "--format", "json"]
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "gpufabric.cli", *args], capture_output=True, text=True,
                          timeout=RUN_TIMEOUT_S, check=False, env=env)  # fmt: skip
    wall = time.monotonic() - started
    assert done.stdout, done.stderr[-3000:]
    data: dict[str, Any] = json.loads(done.stdout)
    report = data["report"]
    suspects = [(s["kind"], s["nodes"], s["verdict"], s["reason"]) for s in report["suspects"]]
    record = {"run": run_dir.name, "wall_s": round(wall, 1), "rounds": report["rounds"],
              "group_tests": report["groups_measured"], "statistic": data["statistic"],
              "batches": data["batches"], "round_log": report["round_log"], "suspects": suspects,
              "node_ranks": data["node_ranks"], "expected": data["expected_gbps"]}  # fmt: skip
    print(json.dumps(record, indent=1), flush=True)
    assert data["statistic"] == "median" and data["batches"] == 5  # the GPU rounds' defaults
    return data, done.returncode, wall


def test_a_clean_run_accuses_nobody(tmp_path: Path) -> None:
    four_gpus()
    data, code, _ = search(tmp_path / "clean")
    assert [s for s in data["report"]["suspects"] if s["verdict"] == "convicted"] == []
    assert code == 0, data["report"]


LIGHT_MISS = (
    "a known miss on 4x H200, 2026-11-27 (docs/benchmarks.md §8): the median of the group tests' batches "
    "never sees a GPU busy a quarter of the time; tail10 over 100 short batches convicted it in 1 of 2 runs "
    "but then missed the heavy load"
)


@pytest.mark.parametrize("kind", ["heavy", pytest.param("light", marks=pytest.mark.xfail(reason=LIGHT_MISS))])
def test_a_loaded_gpu_is_found_as_a_node_within_six_rounds(kind: str, tmp_path: Path) -> None:
    four_gpus()
    load = start_load(kind)
    misses: list[str] = []
    try:
        for run in range(1, RUNS + 1):
            data, code, _ = search(tmp_path / f"{kind}{run}")
            report = data["report"]
            loaded = next(node for node, ranks in data["node_ranks"].items() if LOADED_GPU in ranks)
            convicted = [(s["kind"], s["nodes"]) for s in report["suspects"] if s["verdict"] == "convicted"]
            others = {v for n, v in report["verdicts"].items() if n != loaded}
            if convicted != [("node", [loaded])] or code != 1 or report["verdicts"][loaded] != "slow-node":
                misses.append(f"run {run}: convicted {convicted}, exit {code}, suspects {report['suspects']}")
            elif not others <= {"ok", "not-proven"} or report["rounds"] > ROUND_LIMIT:
                misses.append(f"run {run}: others {others}, {report['rounds']} rounds {report['round_log']}")
    finally:
        load.terminate()
        load.wait(timeout=30)
    assert misses == [], misses  # every run printed above; all of them judged, then any miss fails
