"""Preflight fails nodes that cannot work: GPUs expected but no driver, and NCCL_SOCKET_IFNAME values that
leave NCCL no usable interface under NCCL's own matching rules (prefix, ``^`` exclude, ``=`` exact)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpufabric.analysis.doctor import CheckResult, DoctorReport, Verdict
from gpufabric.analysis.preflight import preflight
from gpufabric.analysis.preflight_host import nccl_selects
from gpufabric.analysis.preflight_probe import Probe

HOST_IFACES = ["eth0", "ifb0", "ifb1", "lo"]  # this CI machine's /sys/class/net


def node(root: Path, environ: dict[str, str], interfaces: list[str] = HOST_IFACES) -> Probe:
    """A node with no NVIDIA driver at all (no nvidia-smi, /proc/driver/nvidia or CUDA torch)."""
    for name in interfaces:
        (root / "sys/class/net" / name).mkdir(parents=True)
    return Probe(environ=environ, root=root, run=lambda argv, env: None, torch_gpus=lambda: None)


def find(report: DoctorReport, check_id: str) -> CheckResult:
    return next(c for c in report.subjects[0].checks if c.id == check_id)


@pytest.mark.parametrize(
    ("setting", "selected"),
    [
        ("eth", ["eth0"]),  # prefix
        ("=eth", []),  # exact: no interface is named just "eth"
        ("=eth0,ifb1", ["eth0", "ifb1"]),  # '=' applies to the whole list
        ("^eth0,lo,ifb", []),  # exclude prefixes: nothing left
        ("^eth", ["ifb0", "ifb1", "lo"]),
        ("^=ifb0", ["eth0", "ifb1", "lo"]),  # exclude exact names
        ("ens5,eth", ["eth0"]),  # an entry that matches nothing does not matter when another does
        ("eth0:5000", ["eth0"]),  # a port suffix is not part of the name
    ],
)
def test_nccl_ifname_rules(setting: str, selected: list[str]) -> None:
    assert nccl_selects(setting, HOST_IFACES) == selected


def test_gpus_expected_but_no_driver_fails(tmp_path: Path) -> None:
    report = preflight(gpus=8, probe=node(tmp_path, {}))
    gpus = find(report, "gpus")
    assert gpus.verdict is Verdict.FAIL and "8 GPU(s) expected, none visible" in gpus.cause
    assert report.exit_code() == 1
    shape = preflight(instance_type="p4d.24xlarge", probe=node(tmp_path / "p4d", {}))
    assert find(shape, "gpus").verdict is Verdict.FAIL  # the shape's 8 GPUs are expected too
    unknown = preflight(probe=node(tmp_path / "any", {}))
    assert find(unknown, "gpus").verdict is Verdict.SKIP  # nothing says this node needs GPUs


@pytest.mark.parametrize(
    ("setting", "verdict", "words"),
    [
        ("^eth0,lo,ifb", Verdict.FAIL, "excludes every interface"),
        ("=eth", Verdict.FAIL, "matches no interface"),
        ("^eth", Verdict.WARN, "leaves only ifb0, ifb1, lo"),
        ("lo", Verdict.WARN, "leaves only lo"),
        ("ens5,eth", Verdict.PASS, "selects eth0"),
    ],
)
def test_ifname_leaving_nothing_usable(tmp_path: Path, setting: str, verdict: Verdict, words: str) -> None:
    report = preflight(probe=node(tmp_path, {"NCCL_SOCKET_IFNAME": setting}))
    ifname = find(report, "socket-ifname")
    assert ifname.verdict is verdict and words in ifname.cause, ifname.cause


def test_unset_ifname_with_only_loopback_warns(tmp_path: Path) -> None:
    report = preflight(probe=node(tmp_path, {}, interfaces=["lo", "docker0"]))
    assert find(report, "socket-ifname").verdict is Verdict.WARN


def test_real_node_exclusion_of_every_interface_fails_through_the_cli() -> None:
    names = sorted(os.listdir("/sys/class/net"))
    env = {**os.environ, "NCCL_SOCKET_IFNAME": "^=" + ",".join(names), "COLUMNS": "200"}
    done = subprocess.run(
        [sys.executable, "-c", "from gpufabric.cli.app import main; main()", "doctor", "--preflight"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "excludes every interface" in done.stdout


def test_real_node_without_enough_gpus_fails_through_the_cli() -> None:
    # No machine shows 4096 GPUs: before the fix a GPU-less host SKIPped this and passed.
    cli = [sys.executable, "-c", "from gpufabric.cli.app import main; main()"]
    done = subprocess.run(
        [*cli, "doctor", "--preflight", "--gpus", "4096", "--format", "json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert '"id": "gpus"' in done.stdout and '"verdict": "fail"' in done.stdout
