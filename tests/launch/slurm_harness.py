"""A real one-host Slurm for the test suite: munged + slurmctld + slurmd from the OS packages.

Everything lives in one temporary directory: its own MUNGE key and socket, its own slurm.conf with free
ports, state and spool directories, and logs. Nothing under /etc is touched, so two test sessions on one
machine do not collide. Clients (sbatch, squeue, sinfo ...) find this cluster through ``SLURM_CONF``,
which ``SlurmCluster.client_env`` carries explicitly (the suite's autouse fixture scrubs ``SLURM_*``).

Settings follow /work/shared/reference/test-infrastructure.md (seen working here as root):
``ProctrackType=proctrack/linuxproc``, ``TaskPlugin=task/none``, ``SelectType=select/cons_tres``,
``SlurmctldHost`` = ``hostname``. The daemons run in the foreground (``-D``) as our children, so
teardown stops them by PID.

Use it from any test directory through the ``slurm_cluster`` fixture (tests/launch/conftest.py), or
directly: ``with SlurmCluster.start(tmp_dir) as cluster: ...``.
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

REQUIRED_BINARIES = ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "sinfo", "scancel", "sacct")


def missing_binaries() -> list[str]:
    """Names of the Slurm/MUNGE programs this machine lacks (``make os-deps`` installs them)."""
    return [name for name in REQUIRED_BINARIES if _which(name) is None]


def _which(name: str) -> str | None:
    return shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin:/usr/local/sbin")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("", 0))
        return int(sock.getsockname()[1])


def _total_memory_mb() -> int:
    pages = os.sysconf("SC_PHYS_PAGES")
    page_size = os.sysconf("SC_PAGE_SIZE")
    return int(pages * page_size / (1024 * 1024))


@dataclass
class SlurmCluster:
    """A running one-node Slurm; ``client_env`` points Slurm's commands at it."""

    root: Path
    conf_path: Path
    hostname: str
    cpus: int
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    munge_dir: Path | None = None

    @property
    def client_env(self) -> dict[str, str]:
        return {"SLURM_CONF": str(self.conf_path)}

    def run_client(self, *argv: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, **self.client_env}
        return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout, check=False)

    def log_tail(self, lines: int = 30) -> str:
        parts = []
        logs = [self.root / "log" / name for name in ("slurmctld.log", "slurmd.log")]
        if self.munge_dir is not None:
            logs.insert(0, self.munge_dir / "munged.log")
        for path in logs:
            name = path.name
            if path.exists():
                parts.append(
                    f"--- {name}\n" + "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
                )
        return "\n".join(parts)

    @classmethod
    @contextmanager
    def start(cls, root: Path, *, ready_timeout_s: float = 60) -> Iterator[SlurmCluster]:
        """Start munged, slurmctld and slurmd under ``root``; stop them by PID on exit."""
        cluster = cls(
            root=root,
            conf_path=root / "etc" / "slurm.conf",
            hostname=socket.gethostname(),
            cpus=os.cpu_count() or 1,
        )
        try:
            cluster._start_munge()
            cluster._write_conf()
            cluster._start_daemons()
            cluster._wait_idle(ready_timeout_s)
            yield cluster
        finally:
            cluster.stop()

    def stop(self) -> None:
        # Reverse start order: slurmd, slurmctld, then munged (the others authenticate through it).
        for name in reversed(list(self.processes)):
            proc = self.processes.pop(name)
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(timeout=5)
        if self.munge_dir is not None:
            shutil.rmtree(self.munge_dir, ignore_errors=True)
            self.munge_dir = None

    # --- munge -------------------------------------------------------------------------------

    def _start_munge(self) -> None:
        (self.root / "log").mkdir(parents=True, exist_ok=True)
        # munged runs as the munge user, who must reach its directory: pytest's temporary directories
        # are private to root, so MUNGE gets its own world-traversable one under /tmp.
        munge_dir = Path(tempfile.mkdtemp(prefix="gpufabric-munge-"))
        munge_dir.chmod(0o755)
        self.munge_dir = munge_dir
        key = munge_dir / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        log_path = munge_dir / "munged.log"
        log_path.touch()
        user = _munge_user()
        if user is not None:
            for path in (munge_dir, key, log_path):
                os.chown(path, user.pw_uid, user.pw_gid)
        argv = [
            _which("munged") or "munged",
            "--foreground",
            f"--socket={self.munge_socket}",
            f"--key-file={key}",
            f"--pid-file={munge_dir / 'munged.pid'}",
            f"--seed-file={munge_dir / 'munged.seed'}",
            f"--log-file={log_path}",
            "--force",
        ]
        self.processes["munged"] = subprocess.Popen(
            argv,
            user=user.pw_uid if user else None,
            group=user.pw_gid if user else None,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        _wait_for(lambda: self.munge_socket.exists(), 15, "munged socket", self)

    @property
    def munge_socket(self) -> Path:
        return self.munge_dir / "munge.socket"

    # --- slurm -------------------------------------------------------------------------------

    def _write_conf(self) -> None:
        for sub in ("etc", "state", "spool", "tmp", "pmix"):
            (self.root / sub).mkdir(exist_ok=True)
        # PMIx's per-step directory is /tmp/spmix_appdir_<uid>_<job>.<step> by default. Job ids start at 1
        # in every cluster, so two clusters on one host (two test sessions, or a leftover of an earlier
        # one) collide: "Cannot create directory ... File exists", and the step never launches.
        (self.conf_path.parent / "mpi.conf").write_text(f"PMIxCliTmpDirBase={self.root / 'pmix'}\n")
        user = pwd.getpwuid(os.getuid()).pw_name
        memory = max(256, int(_total_memory_mb() * 0.8))
        lines = [
            "ClusterName=gpufabric-test",
            "MailProg=/bin/true",
            f"SlurmctldHost={self.hostname}",
            f"SlurmctldPort={_free_port()}",
            f"SlurmdPort={_free_port()}",
            f"SlurmUser={user}",
            f"SlurmdUser={user}",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={self.munge_socket}",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "SwitchType=switch/none",
            "MpiDefault=none",
            "ReturnToService=2",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "JobCompType=jobcomp/none",
            "SchedulerType=sched/backfill",
            "SlurmctldTimeout=30",
            "SlurmdTimeout=30",
            "InactiveLimit=0",
            "MinJobAge=300",
            "KillWait=5",
            f"StateSaveLocation={self.root / 'state'}",
            f"SlurmdSpoolDir={self.root / 'spool'}",
            f"TmpFS={self.root / 'tmp'}",
            f"SlurmctldPidFile={self.root / 'slurmctld.pid'}",
            f"SlurmdPidFile={self.root / 'slurmd.pid'}",
            f"SlurmctldLogFile={self.root / 'log' / 'slurmctld.log'}",
            f"SlurmdLogFile={self.root / 'log' / 'slurmd.log'}",
            "SlurmctldDebug=info",
            "SlurmdDebug=info",
            f"NodeName={self.hostname} CPUs={self.cpus} RealMemory={memory} State=UNKNOWN",
            f"PartitionName=debug Nodes={self.hostname} Default=YES MaxTime=INFINITE State=UP "
            "OverSubscribe=YES",
        ]
        self.conf_path.write_text("\n".join(lines) + "\n")

    def _start_daemons(self) -> None:
        env = {**os.environ, **self.client_env}
        for name in ("slurmctld", "slurmd"):
            argv = [_which(name) or name, "-D", "-f", str(self.conf_path)]
            if name == "slurmctld":
                argv.append("-i")  # ignore (absent) saved state
            self.processes[name] = subprocess.Popen(
                argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
            )
            if name == "slurmctld":
                time.sleep(1.0)

    def _wait_idle(self, timeout_s: float) -> None:
        def idle() -> bool:
            try:  # one slow sinfo on a busy box is not an answer: ask again until the overall deadline
                result = self.run_client("sinfo", "--noheader", "--format=%T", timeout=10)
            except subprocess.TimeoutExpired:
                return False
            return result.returncode == 0 and result.stdout.strip().rstrip("*") == "idle"

        _wait_for(idle, timeout_s, "the Slurm node to become idle", self)


def _munge_user() -> pwd.struct_passwd | None:
    if os.getuid() != 0:
        return None
    try:
        return pwd.getpwnam("munge")
    except KeyError:
        return None


def _wait_for(check: object, timeout_s: float, what: str, cluster: SlurmCluster) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for name, proc in cluster.processes.items():
            if proc.poll() is not None:
                raise RuntimeError(
                    f"{name} exited with {proc.returncode} while waiting for {what}\n" + cluster.log_tail()
                )
        if callable(check) and check():
            return
        time.sleep(0.3)
    raise RuntimeError(f"timed out after {timeout_s:.0f}s waiting for {what}\n" + cluster.log_tail())
