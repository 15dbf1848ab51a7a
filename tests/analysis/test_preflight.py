"""Preflight on a staged node (fake root + command runner) and on this real machine."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from gpufabric.analysis.doctor import CheckResult, DoctorReport, Verdict
from gpufabric.analysis.preflight import preflight
from gpufabric.analysis.preflight_probe import CommandOutput, Probe

SMI_8 = "".join(f"GPU {i}: NVIDIA A100-SXM4-40GB (UUID: GPU-{i})\n" for i in range(8))
FI_INFO_EFA = "".join(f"provider: efa\n    fabric: efa\n    domain: rdmap{i}-rdm\n" for i in range(4))
LIMITS = "Limit          Soft Limit   Hard Limit   Units\nMax locked memory         {}\n"


def stage_node(root: Path, *, uverbs: int = 4, peermem: bool = True, memlock: str = "unlimited") -> None:
    (root / "sys/class/net").mkdir(parents=True)
    for name in ("lo", "eth0", "eth1"):
        (root / "sys/class/net" / name).mkdir()
    (root / "sys/class/infiniband").mkdir(parents=True)
    (root / "dev/infiniband").mkdir(parents=True)
    for i in range(uverbs):
        (root / f"sys/class/infiniband/rdmap{i}").mkdir()
        (root / f"dev/infiniband/uverbs{i}").touch()
    (root / "dev/shm").mkdir(parents=True)
    (root / "proc/self").mkdir(parents=True)
    (root / "proc/modules").write_text(
        ("nvidia_peermem 16384 0 - Live 0x0\n" if peermem else "") + "nvidia 56598528 147 - Live 0x0\n"
    )
    (root / "proc/self/limits").write_text(LIMITS.format(f"{memlock:<20} {memlock:<20} bytes"))
    plugin_dir = root / "opt/amazon/ofi-nccl/lib"
    plugin_dir.mkdir(parents=True)
    (plugin_dir / "libnccl-net.so").touch()


def runner(outputs: Mapping[str, CommandOutput]):  # type: ignore[no-untyped-def]
    def run(argv: Sequence[str], environ: Mapping[str, str]) -> CommandOutput | None:
        return outputs.get(argv[0])

    return run


def probe(
    root: Path, environ: Mapping[str, str], shm_bytes: int = 8 << 30, **outputs: CommandOutput
) -> Probe:
    return Probe(
        environ=environ,
        root=root,
        run=runner(outputs),
        disk_total=lambda _: shm_bytes,
        torch_gpus=lambda: None,
    )


def find(report: DoctorReport, check_id: str) -> CheckResult:
    return next(c for c in report.subjects[0].checks if c.id == check_id)


def healthy_env(root: Path) -> dict[str, str]:
    return {"LD_LIBRARY_PATH": "/opt/amazon/ofi-nccl/lib:/usr/lib", "NCCL_SOCKET_IFNAME": "eth0"}


def test_healthy_p4d_node_passes(tmp_path: Path) -> None:
    stage_node(tmp_path)
    node = probe(
        tmp_path,
        healthy_env(tmp_path),
        **{
            "nvidia-smi": CommandOutput(returncode=0, stdout=SMI_8),
            "fi_info": CommandOutput(returncode=0, stdout=FI_INFO_EFA),
        },
    )
    report = preflight(instance_type="p4d.24xlarge", probe=node)
    assert {c.id: c.verdict for c in report.subjects[0].checks} == {
        "gpus": Verdict.PASS,
        "rdma-devices": Verdict.PASS,
        "fi-info": Verdict.PASS,
        "net-plugin": Verdict.PASS,
        "peermem": Verdict.PASS,
        "memlock": Verdict.PASS,
        "shm": Verdict.PASS,
        "socket-ifname": Verdict.PASS,
    }
    assert report.exit_code() == 0


def test_container_without_efa_mount_and_small_shm_fails(tmp_path: Path) -> None:
    stage_node(tmp_path, uverbs=0, peermem=False, memlock="65536")
    env = {"NCCL_SOCKET_IFNAME": "ens5", "CUDA_VISIBLE_DEVICES": "0,1"}
    node = probe(
        tmp_path,
        env,
        shm_bytes=64 << 20,
        **{
            "nvidia-smi": CommandOutput(returncode=0, stdout=SMI_8),
            "fi_info": CommandOutput(returncode=1, stdout=""),
        },
    )
    report = preflight(expect="efa", gpus=8, probe=node)
    assert find(report, "gpus").verdict is Verdict.FAIL and "2 GPU(s) visible" in find(report, "gpus").cause
    assert find(report, "rdma-devices").verdict is Verdict.FAIL
    assert find(report, "fi-info").verdict is Verdict.FAIL
    plugin = find(report, "net-plugin")
    assert plugin.verdict is Verdict.FAIL and "not on LD_LIBRARY_PATH" in plugin.cause
    assert find(report, "peermem").verdict is Verdict.WARN
    assert find(report, "memlock").verdict is Verdict.FAIL
    assert find(report, "shm").verdict is Verdict.FAIL and "0.06 GiB" in find(report, "shm").cause
    ifname = find(report, "socket-ifname")
    assert ifname.verdict is Verdict.FAIL and "'ens5'" in ifname.cause and "eth0" in ifname.cause
    assert report.exit_code() == 1


def test_missing_tools_skip_with_reasons(tmp_path: Path) -> None:
    node = probe(tmp_path, {})
    report = preflight(expect="efa", probe=node)
    assert find(report, "gpus").verdict is Verdict.SKIP
    assert (
        find(report, "fi-info").verdict is Verdict.SKIP and "not installed" in find(report, "fi-info").cause
    )
    assert find(report, "peermem").verdict is Verdict.SKIP
    assert find(report, "socket-ifname").verdict is Verdict.SKIP
    assert find(report, "shm").verdict is Verdict.FAIL  # no /dev/shm at all under this root


def test_nvidia_smi_failure_and_ifname_prefix_rules(tmp_path: Path) -> None:
    stage_node(tmp_path)
    env = {"NCCL_SOCKET_IFNAME": "=eth1,eth", "NCCL_GPUDIRECTTCPX_SOCKET_IFNAME": "^docker"}
    broken = CommandOutput(
        returncode=9, stdout="", stderr="NVIDIA-SMI has failed because it couldn't communicate"
    )
    report = preflight(probe=probe(tmp_path, env, **{"nvidia-smi": broken}))
    assert (
        find(report, "gpus").verdict is Verdict.FAIL and "couldn't communicate" in find(report, "gpus").cause
    )
    assert find(report, "socket-ifname").verdict is Verdict.PASS


def test_real_machine_preflight_degrades_gracefully() -> None:
    report = preflight()  # this CPU machine: no GPUs, no RDMA; must not raise and must explain each check
    checks = report.subjects[0].checks
    assert len(checks) == 8 and all(c.cause for c in checks)
    assert {c.id: c.verdict for c in checks}["gpus"] in (Verdict.SKIP, Verdict.PASS, Verdict.FAIL)


@pytest.mark.parametrize("fabric", ["ib", "socket", "nvlink", "tcpx"])
def test_every_expectation_runs(tmp_path: Path, fabric: str) -> None:
    stage_node(tmp_path)
    report = preflight(expect=fabric, probe=probe(tmp_path, healthy_env(tmp_path)))
    assert report.subjects[0].expectation == f"--expect {fabric}"
