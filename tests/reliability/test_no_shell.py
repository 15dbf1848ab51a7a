"""No user string reaches a shell, YAML is always loaded safely: a source audit plus one behavioural check.

The only shell scripts gpufabric runs are a task's own ``setup``/``run`` (inside the node wrapper, passed
as one quoted argument) and fixed scripts of our own (the GKE RxDM sidecar command); everything else
starts processes from argv lists. Values of ``envs``/``--env`` travel in the environment, never in text.
"""

from __future__ import annotations

import ast
import os
import subprocess
from pathlib import Path

from gpufabric.launch.task_program import node_wrapper
from gpufabric.task.load import task_from_text

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted([*(ROOT / "src").rglob("*.py"), *(ROOT / "benchmarks").rglob("*.py")])
FORBIDDEN = (
    "shell=True", "os.system(", "os.popen(", "create_subprocess_shell", "getoutput(", "getstatusoutput(",
    "yaml.load(", "yaml.unsafe_load", "yaml.full_load", "yaml.Loader", "yaml.UnsafeLoader", "yaml.FullLoader",
)  # fmt: skip
# Files allowed to put "bash -c"/"sh -c" in an argv, and why.
SHELL_ARGV_ALLOWED = {
    "src/gpufabric/launch/task_program.py": "the task's own setup/run, quoted, inside the node wrapper",
    "src/gpufabric/planner/gke.py": "Google's fixed RxDM sidecar entrypoint (no user input)",
    "src/gpufabric/bench/rank_program.py": "a remote rank's start script: paths shlex-quoted, the config as "
    "a quoted heredoc of one JSON line",
    "src/gpufabric/launch/virtual_nodes.py": "mpirun's virtual-node rank table: our values shlex-quoted, the "
    'program passed as "$@" (never parsed by the shell)',
    "src/gpufabric/testbed/bed.py": 'a fixed script naming the node\'s UTS namespace: the name as "$0", the '
    'program as "$@" (never parsed by the shell)',
    "src/gpufabric/testbed/load.py": "a fixed busy loop (no input) that starves one core for a fault",
    "src/gpufabric/testbed/rsh_agent.py": "mpirun's rsh agent into a test-bed namespace: mpirun hands a "
    "remote command as shell text, as ssh runs it; the host name is shlex-quoted",
}
SUBPROCESS_CALLS = {"run", "Popen", "check_output", "check_call", "call"}


def _rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


def test_no_shell_true_no_unsafe_yaml_anywhere() -> None:
    assert SOURCES
    offenders = [
        f"{_rel(path)}:{lineno}: {pattern}"
        for path in SOURCES
        for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        for pattern in FORBIDDEN
        if pattern in line and not line.lstrip().startswith("#")
    ]
    assert offenders == []


def test_every_subprocess_gets_an_argv_list_not_a_string() -> None:
    offenders = []
    for path in SOURCES:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            if node.func.attr not in SUBPROCESS_CALLS or not node.args:
                continue
            owner = node.func.value
            if not (isinstance(owner, ast.Name) and owner.id in ("subprocess", "asyncio")):
                continue
            first = node.args[0]
            if isinstance(first, (ast.JoinedStr, ast.BinOp)) or (
                isinstance(first, ast.Constant) and isinstance(first.value, str)
            ):
                offenders.append(f"{_rel(path)}:{node.lineno}")
    assert offenders == []


def test_shell_argvs_appear_only_where_allowed() -> None:
    found = set()
    for path in SOURCES:
        text = path.read_text(encoding="utf-8")
        for shell in ('"bash", "-c"', '"sh", "-c"', '"/bin/sh",\n                "-c"', '"/bin/bash", "-c"'):
            if shell in text:
                found.add(_rel(path))
        if '"/bin/sh",' in text and '"-c",' in text:
            found.add(_rel(path))
    assert found <= set(SHELL_ARGV_ALLOWED), found - set(SHELL_ARGV_ALLOWED)


def test_env_values_and_names_never_become_shell_text(tmp_path: Path) -> None:
    pwned = tmp_path / "pwned"
    task = task_from_text(
        f"name: quote-test\nenvs:\n  X: '$(touch {pwned}); `touch {pwned}`'\n"
        "run: |\n  printf 'run saw: %s\\n' \"$X\"\n",
        source="t.yaml",
    )
    env = {**os.environ, **{k: v for k, v in task.envs.items() if v is not None}, "GPUFABRIC_NUM_NODES": "1"}
    done = subprocess.run(
        ["bash", "-c", node_wrapper(task), "gpufabric-node"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"run saw: $(touch {pwned}); `touch {pwned}`"
    assert not pwned.exists()
