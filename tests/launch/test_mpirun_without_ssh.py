"""mpirun where no ssh or rsh exists (a container, the lent GPU machines): OpenMPI's rsh launcher looks
its agent up at start and stops ("plm_rsh_agent: ssh : rsh ... could not be found") even when every rank
is local. The launcher sets the agent to ``false`` for all-local jobs then, and leaves a user's choice
alone. Checked with the real mpirun and a PATH that has no ssh."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from gpufabric.launch.base import RankProgram
from gpufabric.launch.mpirun import MpirunLauncher, MpirunOptions

pytestmark = pytest.mark.skipif(shutil.which("mpirun") is None, reason="OpenMPI's mpirun is not installed")


@pytest.fixture
def no_ssh_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, host_mpi_env: dict[str, str]) -> Path:
    """A PATH with OpenMPI's and Python's programs but no ssh/rsh; the host's MPI settings back."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("mpirun", "orterun", "orted", "prterun", "prted", "false", "sh", "env"):
        found = shutil.which(tool)
        if found:
            (bin_dir / tool).symlink_to(found)
    monkeypatch.setenv("PATH", str(bin_dir))
    for name, value in host_mpi_env.items():
        if name != "OMPI_MCA_plm_rsh_agent":
            monkeypatch.setenv(name, value)
    monkeypatch.delenv("OMPI_MCA_plm_rsh_agent", raising=False)
    if os.geteuid() == 0:
        monkeypatch.setenv("OMPI_ALLOW_RUN_AS_ROOT", "1")
        monkeypatch.setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    return bin_dir


def _program(tmp_path: Path) -> RankProgram:
    """Each rank leaves a file (mpirun splices ranks' stdout chunks: no place for a per-rank proof)."""
    show = (
        "import os, pathlib; rank = os.environ['OMPI_COMM_WORLD_RANK']; "
        f"pathlib.Path({str(tmp_path)!r}, 'rank.' + rank).write_text(rank)"
    )
    return RankProgram(argv=[sys.executable, "-c", show], nranks=2, workdir=tmp_path)


def test_all_local_ranks_start_without_ssh(tmp_path: Path, no_ssh_path: Path) -> None:
    launcher = MpirunLauncher()
    plan = launcher.render(_program(tmp_path))
    argv = plan.commands[0].argv
    assert argv[argv.index("plm_rsh_agent") + 1].endswith("false")
    assert any("no ssh or rsh here" in note for note in plan.notes)
    outcome = launcher.execute(plan, timeout_s=120)
    assert outcome.ok, outcome.failure
    assert sorted(p.read_text() for p in tmp_path.glob("rank.*")) == ["0", "1"]


def test_a_users_agent_is_left_alone(
    tmp_path: Path, no_ssh_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan = MpirunLauncher(MpirunOptions(mca=[("plm_rsh_agent", "/usr/bin/oarsh")])).render(_program(tmp_path))
    assert plan.commands[0].argv.count("plm_rsh_agent") == 1
    monkeypatch.setenv("OMPI_MCA_plm_rsh_agent", "/usr/bin/oarsh")
    assert "plm_rsh_agent" not in MpirunLauncher().render(_program(tmp_path)).commands[0].argv


def test_remote_hosts_never_get_the_stand_in(tmp_path: Path, no_ssh_path: Path) -> None:
    program = RankProgram(argv=["prog"], nranks=2, nodes=2, workdir=tmp_path)
    plan = MpirunLauncher(MpirunOptions(hosts=["a:1", "b:1"])).render(program)
    assert "plm_rsh_agent" not in plan.commands[0].argv
