"""Who this process is: rank, world size, local rank and rendezvous, from whatever launched it.

One function, ``rank_identity(environ)``, reads the variables of our local launcher and torchrun
(``RANK``/``WORLD_SIZE``/``LOCAL_RANK``/``MASTER_ADDR``/``MASTER_PORT``), OpenMPI
(``OMPI_COMM_WORLD_*``), Slurm (``SLURM_PROCID``/``SLURM_NTASKS``/``SLURM_LOCALID``) and SkyPilot
(``SKYPILOT_NODE_RANK``...). The environment is injected so tests never touch ``os.environ``.
The first family that names a rank wins, in the order above; the rendezvous address always comes from
``MASTER_ADDR``/``MASTER_PORT`` (launchers other than ours export them, as torchrun does).
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict

from gpufabric.bench.launcher_vars import FAMILIES, Source
from gpufabric.errors import UsageError


class RankIdentity(BaseModel):
    """This process's place in the job."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    rank: int
    world_size: int
    local_rank: int
    local_world_size: int | None = None
    master_addr: str | None = None
    master_port: int | None = None
    source: Source

    @property
    def init_method(self) -> str:
        """``tcp://addr:port`` when a rendezvous is named, else ``env://`` (torch reads the variables)."""
        if self.master_addr and self.master_port:
            host = f"[{self.master_addr}]" if ":" in self.master_addr else self.master_addr
            return f"tcp://{host}:{self.master_port}"
        return "env://"


def _int(environ: Mapping[str, str], name: str) -> int | None:
    value = environ.get(name)
    if value is None or value.strip() == "":
        return None
    head = value.split("(")[0].split(",")[0].strip()  # Slurm writes "4(x2)" or "4,4" for tasks per node
    try:
        return int(head)
    except ValueError as exc:
        raise UsageError(f"environment: {name}={value!r} is not an integer") from exc


def rank_identity(environ: Mapping[str, str]) -> RankIdentity:
    """Read the rank from the launcher's variables; a process with none is rank 0 of 1."""
    port = _int(environ, "MASTER_PORT")
    addr = environ.get("MASTER_ADDR") or None
    for source, rank_var, size_var, local_var, local_size_var in FAMILIES:
        rank = _int(environ, rank_var)
        if rank is None:
            continue
        world = _int(environ, size_var)
        if world is None:
            raise UsageError(
                f"environment: {rank_var} is set but {size_var} is not; the launcher must set both"
            )
        if not 0 <= rank < world:
            raise UsageError(f"environment: {rank_var}={rank} is outside 0..{world - 1} ({size_var}={world})")
        local = _int(environ, local_var)
        return RankIdentity(
            rank=rank,
            world_size=world,
            local_rank=local if local is not None else 0,
            local_world_size=_int(environ, local_size_var),
            master_addr=addr,
            master_port=port,
            source=source,
        )
    return RankIdentity(
        rank=0,
        world_size=1,
        local_rank=0,
        local_world_size=1,
        master_addr=addr,
        master_port=port,
        source="single",
    )
