"""``require`` (the one-line error of a missing extra) and ``gpufabric env``'s probes, on staged directories
and real programs on a staged PATH: the libnccl search order, its banner version, program versions."""

from __future__ import annotations

import stat
import subprocess
import sys
from pathlib import Path

import pytest

from gpufabric._optional import EXTRAS, install_line, require
from gpufabric.capabilities import find_libnccl, probe_environment
from gpufabric.capabilities.libnccl import SONAME, banner_version
from gpufabric.errors import UsageError

# NCCL compiles this banner into libnccl (src/init.cc VERSION_STRING); nccl4py's nccl/core/utils.py reads
# the CUDA variant from it the same way. Seen on the lent H100 (driver 580.159.04, 2026-11-25): torch's
# nvidia-nccl-cu13 2.28.9 says "NCCL version 2.28.9+cuda13.0" and is the copy cuda.pathfinder's
# load_nvidia_dynamic_lib("nccl") loaded (found_via site-packages); Ubuntu's libnccl2 2.28.3 in
# /lib/x86_64-linux-gnu says "NCCL version 2.28.3", with no +cuda part.
BANNER = b"\x00garbage\x00NCCL version 2.28.9+cuda13.0\x00more"


def fake_libnccl(directory: Path, banner: bytes = BANNER) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / SONAME
    path.write_bytes(b"\x7fELF" + b"\x00" * 64 + banner)
    return path


def program(bin_dir: Path, name: str, script: str) -> None:
    bin_dir.mkdir(parents=True, exist_ok=True)
    path = bin_dir / name
    path.write_text(f"#!/bin/sh\n{script}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def test_require_names_the_extra_and_the_alternative(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)  # what find_spec sees on a plain install
    with pytest.raises(UsageError) as caught:
        require("torch", extra="torch", for_what="gpufabric bench", instead="--engine nccl-tests")
    assert str(caught.value) == (
        'gpufabric bench needs torch, which is not installed: pip install "gpufabric[torch]"; '
        "or use --engine nccl-tests"
    )
    assert caught.value.exit_code == 2


def test_require_tells_a_broken_install_from_a_missing_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "brokenwheel"
    package.mkdir()
    (package / "__init__.py").write_text(
        "raise ImportError('libnccl.so.2: cannot open shared object file: No such file or directory')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(UsageError) as caught:
        require("brokenwheel", extra="gpu", for_what="the gpu engine")
    message = str(caught.value)
    assert "installed but does not import (libnccl.so.2: cannot open shared object file" in message
    assert 'pip install --force-reinstall "gpufabric[gpu]"' in message


def test_a_missing_gpu_engine_is_named_by_its_pypi_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "nccl", None)
    with pytest.raises(UsageError) as caught:
        require("nccl.bindings", extra="gpu", for_what="gpufabric bench --engine nccl")
    assert 'needs nccl4py, which is not installed: pip install "gpufabric[gpu]"' in str(caught.value)


def test_require_returns_the_module_when_installed() -> None:
    assert require("yaml", extra="kubernetes", for_what="x").safe_load("a: 1") == {"a": 1}
    with pytest.raises(ValueError, match="unknown extra 'tensorflow'"):
        require("yaml", extra="tensorflow", for_what="x")


def test_every_extra_of_pyproject_is_described() -> None:
    import tomllib

    pyproject = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text(encoding="utf-8"))
    extras = pyproject["project"]["optional-dependencies"]
    assert set(EXTRAS) | {"all", "dev"} == set(extras)
    for name, extra in EXTRAS.items():
        declared = {req.split(">")[0].split("=")[0].split("[")[0].strip() for req in extras[name]}
        assert set(extra.distributions) <= declared, (name, declared)
    assert extras["all"] == [f"gpufabric[{','.join(EXTRAS)}]"]
    assert install_line("gpu") == 'pip install "gpufabric[gpu]"'


def test_libnccl_is_searched_in_the_direct_engines_order(tmp_path: Path) -> None:
    site, ld_dir, chosen = tmp_path / "site-packages", tmp_path / "ld", tmp_path / "chosen"
    fake_libnccl(site / "nvidia" / "nccl" / "lib")
    no_ldconfig: list[str] = []
    found = find_libnccl({}, site_dirs=[str(site)], ldconfig=lambda: no_ldconfig)
    if found is not None and found.found_via == "system":  # this machine has a system NCCL: it wins
        pytest.skip(f"a system libnccl ({found.path}) comes before every staged one here")
    # Only a wheel's copy (nvidia-nccl-cu13, as torch brings): nccl4py's cuda-pathfinder finds it.
    assert found is not None and found.found_via == "site-packages (a wheel's copy)"
    assert (found.version, found.cuda) == ("2.28.9", "13.0")
    # The system loader's NCCL (a container's, with its net plugin beside it) comes before any wheel's.
    fake_libnccl(ld_dir, banner=b"NCCL version 2.28.3\x00")  # as Ubuntu's libnccl2: no +cuda part
    environ = {"LD_LIBRARY_PATH": f"{tmp_path / 'empty'}:{ld_dir}"}
    found = find_libnccl(environ, site_dirs=[str(site)], ldconfig=lambda: no_ldconfig)
    assert found is not None and found.found_via == "LD_LIBRARY_PATH" and found.path == str(ld_dir / SONAME)
    assert (found.version, found.cuda) == ("2.28.3", None)
    # And --nccl-lib (GPUFABRIC_NCCL_LIB) before everything.
    named = fake_libnccl(chosen)
    found = find_libnccl({**environ, "GPUFABRIC_NCCL_LIB": str(named)}, site_dirs=[str(site)],
                         ldconfig=lambda: no_ldconfig)  # fmt: skip
    assert found is not None and found.found_via == "--nccl-lib"


def test_libnccl_falls_back_to_nccl_home_and_reports_absence(tmp_path: Path) -> None:
    home = tmp_path / "nccl-home"
    no_ldconfig: list[str] = []
    if find_libnccl({}, site_dirs=[], ldconfig=lambda: no_ldconfig) is None:
        fake_libnccl(home / "lib64")
        found = find_libnccl({"NCCL_HOME": str(home)}, site_dirs=[], ldconfig=lambda: no_ldconfig)
        assert found is not None and found.found_via == "NCCL_HOME"
    empty = tmp_path / "empty.so"
    empty.write_bytes(b"")
    assert banner_version(empty) == (None, None)
    garbage = tmp_path / "garbage.so"
    garbage.write_bytes(b"\x7fELF no banner here")
    assert banner_version(garbage) == (None, None)


def test_env_lists_programs_with_their_versions_or_why_not(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    program(bin_dir, "mpirun", "echo 'mpirun (Open MPI) 4.1.4'; echo; echo 'Report bugs to ...'")
    # sbatch on a host without Slurm config: no version, the reason on stderr (seen on this project's CI).
    program(bin_dir, "sbatch", "echo 'sbatch: fatal: Could not establish a configuration source' >&2; exit 1")
    program(bin_dir, "all_reduce_perf", "exit 0")
    report = probe_environment({"PATH": str(bin_dir)})
    found = {c.name: c for c in report.capabilities}
    assert found["mpirun"].installed and found["mpirun"].version == "mpirun (Open MPI) 4.1.4"
    assert found["sbatch (Slurm)"].installed and found["sbatch (Slurm)"].version is None
    assert "Could not establish a configuration source" in str(found["sbatch (Slurm)"].detail)
    assert found["nccl-tests binaries"].installed and found["nccl-tests binaries"].detail == str(bin_dir)
    sky = found["sky (SkyPilot)"]
    assert not sky.installed and sky.how_to_add.startswith("pip install")
    assert report.python == ".".join(str(v) for v in sys.version_info[:3])


def test_ensure_installed_checks_without_importing() -> None:
    # The engine commands check for torch in the parent process; only their ranks may pay for importing it.
    probe = (
        "import sys\nfrom gpufabric._optional import ensure_installed\n"
        "ensure_installed('torch', extra='torch', for_what='x')\nprint('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
