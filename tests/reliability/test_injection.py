"""Hostile names and values against every renderer of shell text: nothing the user wrote ever runs.

Names: a newline, ``;``, ``$(...)``, backticks, quotes, ``=``, a leading digit, a space. Each is refused at
the boundary where it enters (task file ``envs:``, ``--env``, a pod_config ``env`` entry, a program built in
code) with one line and exit 2. Before this, ``envs: {"X\\ntouch pwned\\n": ...}`` became a command of the
Slurm batch script, and ``A=B`` crashed ``launch --on local`` with a traceback.

Values: rendered by every renderer (sbatch scripts of launch and plan, mpirun's virtual-node table, the node
wrapper inside Kubernetes manifests, SkyPilot's run/setup, docker-run.sh, env.sh, GCP's startup script, the
dry-run's command lines), then checked with ``bash -n`` and run by ``bash`` with every outside command
replaced by a stub: the marker file that each hostile value would create must never appear, and values
arrive byte for byte.
"""

from __future__ import annotations

import os
import shlex
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpufabric.catalog import Cloud
from gpufabric.errors import GpufabricError, InputError, UsageError
from gpufabric.launch.base import RankProgram
from gpufabric.launch.mpirun import MpirunLauncher, MpirunOptions
from gpufabric.launch.registry import LauncherSettings, plan_task
from gpufabric.launch.skypilot import SkyPilotLauncher
from gpufabric.planner import PlanRequest, Platform, export_files, plan, read_pod_config
from gpufabric.report.launch_plan_render import plan_text
from gpufabric.task.load import parse_env_assignments, task_from_text

LAUNCHERS = ("local", "mpirun", "slurm", "kubernetes", "skypilot")


def hostile_values(marker: Path) -> list[str]:
    m = shlex.quote(str(marker))
    return [
        f"a\ntouch {m}\n",
        f"a; touch {m}",
        f"$(touch {m})",
        f"`touch {m}`",
        f"'; touch {m}; '",
        f'"; touch {m}; "',
        f"x=y $(touch {m})",
        f"\\'$(touch {m})",
    ]


HOSTILE_NAMES = ["X\ntouch pwned\n", "A;touch pwned", "$(touch pwned)", "`touch pwned`", "A'B", 'A"B',
                 "A=B", "1A", "A B", "A-B"]  # fmt: skip


@pytest.fixture
def marker(tmp_path: Path) -> Path:
    return tmp_path / "pwned"


def stub_dir(tmp_path: Path, names: list[str]) -> Path:
    """Commands that log their argv (one argument per line, NUL-separated calls) and succeed."""
    stubs = tmp_path / "stubs"
    stubs.mkdir(exist_ok=True)
    for name in names:
        path = stubs / name
        path.write_text(f'#!/bin/bash\nprintf "%s\\n" {name} "$@" >> {shlex.quote(str(tmp_path))}/calls\n')
        path.chmod(0o755)
    return stubs


def sandbox_bash(script: str, tmp_path: Path, *, env: dict[str, str], path: str, args: list[str] = ()) -> str:
    """``bash -n`` then ``bash`` on ``script`` with only ``env`` (and PATH), in ``tmp_path``; its stdout."""
    checked = subprocess.run(["bash", "-n", "-c", script], capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stderr
    done = subprocess.run(
        ["/bin/bash", "-c", script, "sandbox", *args], capture_output=True, text=True, cwd=tmp_path,
        env={**env, "PATH": path, "HOME": str(tmp_path)}, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def task_text(envs: dict[str, str], run: str = "echo ok") -> str:
    return yaml.safe_dump({"name": "inj", "num_nodes": 1, "envs": envs, "run": run,
                           "resources": {"image_id": "docker:busybox"}})  # fmt: skip


# --- names: refused at every boundary, one line, exit 2 ----------------------------------------------


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_a_hostile_name_in_a_task_file_is_refused_in_one_line(name: str) -> None:
    with pytest.raises(InputError) as caught:
        task_from_text(task_text({name: "1"}), source="task.yaml")
    message = str(caught.value)
    assert caught.value.exit_code == 2
    assert "\n" not in message and message.startswith("task.yaml: envs: ")
    assert "not a valid environment variable name" in message and "rename it" in message


@pytest.mark.parametrize("name", [n for n in HOSTILE_NAMES if "=" not in n])  # --env A=B=1 sets A
def test_a_hostile_name_in_an_env_flag_is_refused_in_one_line(name: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_env_assignments([f"{name}=1"], environ={})
    assert caught.value.exit_code == 2 and "\n" not in str(caught.value)
    assert str(caught.value).startswith("--env ")


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_a_hostile_name_in_a_pod_config_is_refused_in_one_line(name: str, tmp_path: Path) -> None:
    pod_config = tmp_path / "pod.yaml"
    pod_config.write_text(yaml.safe_dump({"spec": {"containers": [{"env": [{"name": name, "value": "1"}]}]}}))
    with pytest.raises(InputError) as caught:
        read_pod_config(pod_config)
    assert "\n" not in str(caught.value) and "env[0].name: " in str(caught.value)


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_a_program_built_in_code_with_a_hostile_name_is_refused(name: str, tmp_path: Path) -> None:
    with pytest.raises(UsageError) as caught:
        RankProgram(argv=["true"], env={name: "1"}, nranks=1, workdir=tmp_path)
    assert "\n" not in str(caught.value)


def gpufabric(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gpufabric.cli", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=300, check=False)  # fmt: skip


@pytest.mark.parametrize(("name", "on"), [("A=B", "local"), ("X\ntouch pwned\n", "slurm")])
def test_the_cli_refuses_a_hostile_name_with_exit_2_and_runs_nothing(
    name: str, on: str, tmp_path: Path
) -> None:
    (tmp_path / "task.yaml").write_text(task_text({name: "1"}, run="touch ran"))
    for extra in ([], ["--dry-run"]):
        proc = gpufabric("launch", "task.yaml", "--on", on, *extra, cwd=tmp_path)
        assert proc.returncode == 2, proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1 and proc.stderr.startswith(
            "Error: task.yaml: envs:"
        )
    assert not (tmp_path / "ran").exists() and not (tmp_path / "pwned").exists()


def test_a_line_break_in_an_sbatch_option_is_refused(tmp_path: Path) -> None:
    task = task_from_text(task_text({}), source="task.yaml")
    settings = LauncherSettings()
    settings.slurm.partition = "gpu\ntouch pwned"
    with pytest.raises(UsageError, match="control character"):
        plan_task(task, "slurm", workdir=tmp_path, settings=settings)
    with pytest.raises(UsageError, match="control character"):
        plan_task(task, "slurm", workdir=tmp_path / "a\ntouch pwned")
    request = PlanRequest(cloud=Cloud.AWS, instance_type="p5.48xlarge", platform=Platform.SLURM,
                          node_hostnames=["n1\ntouch pwned"])  # fmt: skip
    with pytest.raises(UsageError, match="control character"):
        plan(request)


# --- values: rendered, then run; nothing executes --------------------------------------------------


def command_blocks(text: str) -> list[str]:
    """The ``## command`` sections of a dry-run's text: ``KEY=VALUE`` lines, then the command line."""
    blocks = []
    for section in text.split("\n## command")[1:]:
        body = section.split("\n", 1)[1]
        blocks.append(body.split("\n\n## ", 1)[0])
    return blocks


def test_launch_plans_of_every_launcher_keep_hostile_values_inert(tmp_path: Path, marker: Path) -> None:
    values = hostile_values(marker)
    envs = {f"V{i}": v for i, v in enumerate(values)}
    task = task_from_text(task_text(envs, run='printenv V0 V1 V2 V3 V4 V5 V6 V7 > "$OUT"'), source="t")
    workdir = tmp_path / "run $(touch pwned); `touch pwned`"
    stubs = stub_dir(tmp_path, ["srun", "scontrol", "getent", "sbatch", "kubectl", "sky", "mpirun", "bash"])
    for on in LAUNCHERS:
        _, launch_plan = plan_task(task, on, workdir=workdir)
        # The dry-run's text (KEY=VALUE command lines) parses as shell and, run, executes nothing of ours.
        for block in command_blocks(plan_text(launch_plan)):
            sandbox_bash(block, tmp_path, env={}, path=str(stubs))
        for content in launch_plan.files.values():  # sbatch script; SkyPilot YAML (checked below)
            if content.startswith("#!/bin/bash"):
                sandbox_bash(
                    content, tmp_path, env=launch_plan.commands[0].env, path=f"{stubs}:/usr/bin:/bin"
                )
        assert not marker.exists(), f"--on {on} executed a value"
    # The node wrapper every launcher runs (the Kubernetes pod's command here) passes values untouched.
    _, k8s = plan_task(task, "kubernetes", workdir=workdir)
    job = next(m for m in k8s.manifests if m["kind"] == "Job")
    main = job["spec"]["template"]["spec"]["containers"][0]  # type: ignore[index]
    pod_env = {e["name"]: e["value"] for e in main["env"] if "value" in e}
    out = tmp_path / "out"
    argv = main["command"]
    assert argv[:2] == ["bash", "-c"]
    sandbox_bash(argv[2], tmp_path, env={**pod_env, "OUT": str(out), "JOB_COMPLETION_INDEX": "0"},
                 path="/usr/bin:/bin", args=argv[4:])  # fmt: skip
    assert out.read_text() == "".join(v + "\n" for v in values)
    assert not marker.exists()


def test_skypilot_task_yaml_round_trips_hostile_values(tmp_path: Path, marker: Path) -> None:
    values = hostile_values(marker)
    task = task_from_text(task_text({f"V{i}": v for i, v in enumerate(values)}), source="t")
    _, sky = plan_task(task, "skypilot", workdir=tmp_path)
    document = yaml.safe_load(next(iter(sky.files.values())))
    assert [document["envs"][f"V{i}"] for i in range(len(values))] == values


def test_skypilot_engine_run_and_setup_scripts_keep_hostile_arguments_inert(
    tmp_path: Path, marker: Path
) -> None:
    values = hostile_values(marker)
    workdir = tmp_path / "w $(touch pwned)"
    program = RankProgram(argv=["/usr/bin/python3", "-m", "x", *values], nranks=2, nodes=2, workdir=workdir,
                          env={"NCCL_DEBUG_FILE": f"{workdir}/nccl/x.log"})  # fmt: skip
    document = yaml.safe_load(next(iter(SkyPilotLauncher().render(program).files.values())))
    stubs = stub_dir(tmp_path, ["python3"])
    node = {"SKYPILOT_NODE_IPS": "10.0.0.1\n10.0.0.2", "SKYPILOT_NUM_NODES": "2", "SKYPILOT_NODE_RANK": "0"}
    for key in ("setup", "run"):
        sandbox_bash(document[key], tmp_path, env=node, path=f"{stubs}:/usr/bin:/bin")
    assert not marker.exists()
    calls = (tmp_path / "calls").read_text()
    assert all(v + "\n" in calls for v in values if "\n" not in v)


def test_mpirun_virtual_node_table_keeps_hostile_gpu_ids_inert(tmp_path: Path, marker: Path) -> None:
    values = hostile_values(marker)
    program = RankProgram(argv=["printenv", "CUDA_VISIBLE_DEVICES"], nranks=2, gpus_per_node=1,
                          workdir=tmp_path)  # fmt: skip
    launcher = MpirunLauncher(MpirunOptions(virtual_nodes=2), gpu_ids=values[:2])
    argv = launcher.render(program).commands[0].argv
    start = argv.index("sh")
    assert argv[start + 1] == "-c"
    for rank in (0, 1):
        done = subprocess.run([*argv[start:]], capture_output=True, text=True, check=False, cwd=tmp_path,
                              env={"OMPI_COMM_WORLD_RANK": str(rank), "PATH": "/usr/bin:/bin"})  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert done.stdout == values[rank] + "\n"
    assert not marker.exists()


def _pod_config_with(tmp_path: Path, env: dict[str, str]) -> Path:
    path = tmp_path / "pod.yaml"
    entries = [{"name": k, "value": v} for k, v in env.items()]
    path.write_text(yaml.safe_dump({"spec": {"containers": [{"env": entries}]}}))
    return path


def test_env_sh_and_docker_script_keep_hostile_values_and_image_inert(tmp_path: Path, marker: Path) -> None:
    values = hostile_values(marker)
    env = {f"V{i}": v for i, v in enumerate(values)}
    k8s = plan(PlanRequest(cloud=Cloud.AWS, instance_type="p5.48xlarge", platform=Platform.KUBERNETES,
                           pod_config=read_pod_config(_pod_config_with(tmp_path, env))))  # fmt: skip
    env_sh = export_files(k8s)["env.sh"]
    printed = sandbox_bash(env_sh + "\nfor v in V0 V1 V2 V3 V4 V5 V6 V7; do printf '%s\\0' \"${!v}\"; done",
                           tmp_path, env={}, path="/usr/bin:/bin")  # fmt: skip
    assert printed.split("\0")[:-1] == values
    stubs = stub_dir(tmp_path, ["docker"])
    for image in values:
        docker = plan(PlanRequest(cloud=Cloud.AWS, instance_type="p5.48xlarge", platform=Platform.DOCKER,
                                  image=image))  # fmt: skip
        (tmp_path / "calls").unlink(missing_ok=True)
        sandbox_bash(export_files(docker)["docker-run.sh"], tmp_path, env={}, path=str(stubs))
        assert image + "\n" in (tmp_path / "calls").read_text()
    assert not marker.exists()


def test_docker_script_uses_an_exported_image(tmp_path: Path, marker: Path) -> None:
    """``${IMAGE}`` was single-quoted, so docker got the text ``${IMAGE}`` whatever the user exported."""
    docker = plan(PlanRequest(cloud=Cloud.AZURE, accelerator="H100", platform=Platform.DOCKER))
    assert "IMAGE" in docker.parameters
    script = export_files(docker)["docker-run.sh"]
    stubs = stub_dir(tmp_path, ["docker"])
    image = f"registry.example/nccl:1 $(touch {marker})"
    sandbox_bash(script, tmp_path, env={"IMAGE": image}, path=str(stubs))
    assert image + "\n" in (tmp_path / "calls").read_text()
    unset = subprocess.run(["/bin/bash", "-c", script], capture_output=True, text=True, check=False,
                           env={"PATH": str(stubs)})  # fmt: skip
    assert unset.returncode != 0 and "export IMAGE=" in unset.stderr
    assert not marker.exists()


def test_plan_sbatch_and_gcp_startup_scripts_parse_and_run_nothing_unplanned(tmp_path: Path) -> None:
    slurm = plan(PlanRequest(cloud=Cloud.AWS, instance_type="p5.48xlarge", platform=Platform.SLURM))
    stubs = stub_dir(tmp_path, ["srun"])
    sandbox_bash(export_files(slurm)["job.sbatch"], tmp_path, env={}, path=str(stubs))
    commands = ["cos-extensions", "mount", "docker", "iptables", "modprobe", "mkdir", "lspci", "grep",
                "chmod", "cp", "readlink"]  # fmt: skip
    stubs = stub_dir(tmp_path, commands)
    for shape in ("a3-highgpu-8g", "a3-megagpu-8g", "a3-ultragpu-8g"):
        vm = plan(PlanRequest(cloud=Cloud.GCP, instance_type=shape, platform=Platform.VM))
        items: list[dict[str, Any]] = vm.documents["compute.instances"][0]["metadata"]["items"]
        script = next(i["value"] for i in items if i["key"] == "startup-script")
        sandbox_bash(script, tmp_path, env={}, path=str(stubs))  # only stubs on PATH: nothing real runs


def test_every_executable_the_plan_writes_is_a_script_bash_parses(tmp_path: Path) -> None:
    for platform in (Platform.SLURM, Platform.DOCKER):
        files = export_files(
            plan(PlanRequest(cloud=Cloud.AWS, instance_type="p5.48xlarge", platform=platform))
        )
        for name, text in files.items():
            if name.endswith((".sh", ".sbatch")):
                checked = subprocess.run(
                    ["bash", "-n", "-c", text], capture_output=True, text=True, check=False
                )
                assert checked.returncode == 0, (name, checked.stderr)


def test_the_cli_runs_a_task_with_hostile_values_and_executes_none(tmp_path: Path, marker: Path) -> None:
    values = hostile_values(marker)
    (tmp_path / "task.yaml").write_text(task_text({f"V{i}": v for i, v in enumerate(values)},
                                                  run="printenv V0 V1 V2 V3 V4 V5 V6 V7 > out"))  # fmt: skip
    proc = gpufabric("launch", "task.yaml", "--on", "local", "--workdir", "w", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "out").read_text() == "".join(v + "\n" for v in values)
    assert not marker.exists()
    assert not any(stat.S_ISREG(os.stat(p).st_mode) and p.name == "pwned" for p in tmp_path.rglob("*"))
    assert GpufabricError  # the tree every refusal above belongs to
