"""Task files: the seeds' YAML loads into typed models; bad input is one line naming file, field and fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpufabric.errors import InputError, UsageError
from gpufabric.task import load_task, parse_env_assignments, task_from_text

SEED_TASK = Path(__file__).parents[1] / "fixtures" / "launch" / "nccl_efa.yaml"


def test_seed_nccl_efa_yaml_loads_with_every_field() -> None:
    task = load_task(SEED_TASK)
    assert task.name == "nccl-test-efa"
    assert task.num_nodes == 2
    assert task.resources.cloud == "kubernetes"
    assert str(task.resources.accelerators) == "A100:8"
    assert task.resources.gpus_per_node == 8
    assert task.resources.cpus == "90+"
    assert task.resources.docker_image == "public.ecr.aws/hpc-cloud/nccl-tests:latest"
    assert task.envs == {"USE_EFA": "true"}
    assert "all_reduce_perf" in (task.run or "")
    limits = task.pod_config["spec"]["containers"][0]["resources"]["limits"]
    assert limits == {"vpc.amazonaws.com/efa": 4}


def test_env_override_wins_like_sky_launch_env() -> None:
    task = load_task(SEED_TASK, {"USE_EFA": "false", "EXTRA": "1"})
    assert task.envs == {"USE_EFA": "false", "EXTRA": "1"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("num_node: 2\nrun: x", "t.yaml: num_node: unknown field; did you mean 'num_nodes'?"),
        ("resources:\n  network_tier: fast", "resources.network_tier: 'fast' is not one of: standard, best"),
        ("resources:\n  accelerators: A100x8\nrun: x", "did you mean 'A100:8'?"),
        ("resources:\n  acelerators: A100:8", "acelerators: unknown field; did you mean 'accelerators'?"),
        ("num_nodes: 0\nrun: x", "num_nodes: Input should be greater than or equal to 1 (got 0)"),
        ("envs:\n  HF_TOKEN: null", "envs.HF_TOKEN is required (null in the task file); pass --env"),
        ("run: [", "t.yaml line 1 column"),
        ("- run: x", "a task file is a YAML mapping"),
        ("", "the task file is empty"),
        ("name: has space\nrun: x", "name: 'has space': use letters"),
    ],
)
def test_bad_task_is_one_line_with_field_and_fix(text: str, expected: str) -> None:
    with pytest.raises(InputError) as info:
        task_from_text(text, source="t.yaml")
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("t.yaml")
    assert expected in message


def test_yaml_scalars_become_shell_strings() -> None:
    text = "envs:\n  A: true\n  B: 8\n  C: 1.5\nresources:\n  cpus: 8\n  accelerators: {H100: 4}"
    task = task_from_text(text, source="t")
    assert task.envs == {"A": "true", "B": "8", "C": "1.5"}
    assert task.resources.cpus == "8"
    assert str(task.resources.accelerators) == "H100:4"


def test_required_env_can_be_given_by_override() -> None:
    task = task_from_text("envs:\n  HF_TOKEN: null\nrun: x", source="t", env_overrides={"HF_TOKEN": "abc"})
    assert task.envs["HF_TOKEN"] == "abc"


def test_missing_file_names_it(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"nope.yaml: cannot read task file"):
        load_task(tmp_path / "nope.yaml")


def test_env_assignments() -> None:
    assert parse_env_assignments(["USE_EFA=false", "X=a=b"]) == {"USE_EFA": "false", "X": "a=b"}
    assert parse_env_assignments(["HOME_DIR"], environ={"HOME_DIR": "/h"}) == {"HOME_DIR": "/h"}
    with pytest.raises(UsageError, match=r"--env '1X=2': '1X' is not a valid environment variable name"):
        parse_env_assignments(["1X=2"])
    with pytest.raises(UsageError, match=r"--env '=2': expected NAME=VALUE"):
        parse_env_assignments(["=2"])
    with pytest.raises(UsageError, match=r"--env NOPE: no '=VALUE' and NOPE is not set here"):
        parse_env_assignments(["NOPE"], environ={})
