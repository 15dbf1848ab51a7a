"""The MPS pipe directory stays within a Unix socket's path limit, wherever the run directory is."""

from __future__ import annotations

import os
from pathlib import Path

from gpufabric.launch.mps import SOCKET_NAME_ROOM, SOCKET_PATH_LIMIT, mps_env, pipe_directory


def test_a_shallow_run_directory_keeps_its_own_pipe_directory() -> None:
    root = Path("/r/mps")
    assert pipe_directory(root) == root / "pipe"
    assert mps_env(root) == {"CUDA_MPS_PIPE_DIRECTORY": "/r/mps/pipe", "CUDA_MPS_LOG_DIRECTORY": "/r/mps/log"}


def test_a_deep_run_directory_gets_a_short_pipe_directory_named_from_it(tmp_path: Path) -> None:
    # pytest's tmp_path plus certify's node/<name>/mps was too deep: the daemon exited 1 with no word
    deep = tmp_path / "test_clean_runs_certify_every_0" / "clean0" / "node" / "node0000" / "mps"
    pipe = pipe_directory(deep)
    assert len(os.fsencode(str(pipe))) + SOCKET_NAME_ROOM <= SOCKET_PATH_LIMIT
    assert pipe == pipe_directory(deep), "the daemon and mpirun's -x variables must agree"
    assert pipe != pipe_directory(deep.parent / "other"), "two runs never share a daemon"
    assert mps_env(deep)["CUDA_MPS_LOG_DIRECTORY"] == str(deep / "log"), "the logs stay with the run"
