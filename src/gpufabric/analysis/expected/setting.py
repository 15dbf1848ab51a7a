"""``RunSetting``: how a run was laid out, as the expected-performance model needs it: NCCL nodes, physical
hosts, ranks per node, the transport the user forced, NVLS, a forced algorithm, socket threads.

NCCL's own log says it best (``nnodes``, ``nranks``, ``NCCL_HOSTID`` virtual nodes, the network it
picked, ``X set by environment to Y``), so the attestation comes first; the result's metadata (hosts,
world size, the ranks' environment) fills in where there is no log.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field

from gpufabric.analysis.expected.shapes import physical_host, run_hosts
from gpufabric.expect.conditions import Transport
from gpufabric.expect.regimes import Regime
from gpufabric.results.attestation import Attestation
from gpufabric.results.model import RunResult

# NCCL_ALGO's words for the regimes the model knows (NCCL's src/enqueue.cc algorithm names).
_ALGOS = {"ring": Regime.RING, "tree": Regime.TREE, "nvls": Regime.NVLS, "collnetdirect": Regime.COLLNET,
          "collnetchain": Regime.COLLNET, "pat": Regime.PAT}  # fmt: skip


class RunSetting(BaseModel):
    """The layout of one run."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    nodes: int = Field(ge=1, description="nodes as NCCL counts them (virtual nodes included)")
    hosts: int = Field(ge=1, description="physical hosts")
    ranks_per_node: int | None = Field(default=None, ge=1)
    transport: Transport = "auto"
    nvls: bool | None = None
    all_reduce_regime: Regime | None = Field(default=None, description="forced by NCCL_ALGO")
    socket_threads: int | None = None
    socks_per_thread: int | None = None
    ranks_per_process: int | None = Field(
        default=None, description="1: one process per rank (our engines); N: nccl-tests -g N (-t)"
    )
    cpu_ranks: bool = Field(default=False, description="gloo on CPUs: no NCCL transport to model")
    network_kind: str | None = Field(default=None, description="the network NCCL's log says it used")
    notes: tuple[str, ...] = ()

    @property
    def virtual(self) -> bool:
        return self.hosts == 1 and self.nodes > 1

    def words(self) -> str:
        """``2 nodes on 1 host (virtual nodes), 2 ranks per node, sockets forced``."""
        nodes = f"{self.nodes} node{'s' if self.nodes > 1 else ''}"
        if self.virtual:
            nodes += " on 1 host (virtual nodes)"
        elif self.hosts != self.nodes:
            nodes += f" on {self.hosts} hosts"
        parts = [nodes]
        if self.ranks_per_node is not None:
            parts.append(f"{self.ranks_per_node} rank{'s' if self.ranks_per_node > 1 else ''} per node")
        if self.transport == "socket":
            parts.append("NCCL's Socket transport forced")
        if self.network_kind:
            parts.append(f"network {self.network_kind} in NCCL's log")
        return ", ".join(parts)


def _env(result: RunResult | None, attestation: Attestation | None) -> dict[str, str]:
    """The ranks' environment: the result's, then what NCCL's log says was set (the log wins)."""
    env = dict(result.metadata.env) if result is not None else {}
    if attestation is not None:
        env.update(attestation.nccl_env)
    return env


def _int(env: Mapping[str, str], name: str) -> int | None:
    value = env.get(name, "").strip()
    return int(value) if value.isdigit() and int(value) > 0 else None


def _on(env: Mapping[str, str], name: str) -> bool:
    return env.get(name, "").strip() not in ("", "0")


def _nvls(env: Mapping[str, str], attestation: Attestation | None) -> bool | None:
    if env.get("NCCL_NVLS_ENABLE", "").strip() == "0":
        return False
    if attestation is not None and attestation.nvls is not None:
        return attestation.nvls or bool(attestation.nvls_channels)
    return None


def _regime(env: Mapping[str, str]) -> Regime | None:
    """NCCL_ALGO naming exactly one algorithm (``Ring``, ``^Tree`` excluded): the one all_reduce runs."""
    words = [w.strip().lower() for w in env.get("NCCL_ALGO", "").split(",") if w.strip()]
    if len(words) != 1 or words[0].startswith("^"):
        return None
    return _ALGOS.get(words[0])


def _ranks(result: RunResult | None, attestation: Attestation | None) -> int | None:
    if attestation is not None and attestation.nranks:
        return attestation.nranks
    if result is None:
        return None
    if result.metadata.world_size:
        return result.metadata.world_size
    return max((s.nranks or 0 for s in result.series), default=0) or None


def _ranks_per_process(result: RunResult | None) -> int | None:
    """One process per rank for our engines; nccl-tests' ``nThread`` x ``nGpus`` (its -t and -g)."""
    if result is None:
        return None
    if result.metadata.engine == "gpufabric":
        return 1
    settings = result.metadata.settings
    threads, gpus = settings.get("nthreads"), settings.get("ngpus")
    if isinstance(gpus, int) and gpus > 0:
        return gpus * (threads if isinstance(threads, int) and threads > 0 else 1)
    return None


def _ranks_sharing_a_gpu(attestation: Attestation | None) -> tuple[int, str]:
    """The most ranks on one GPU (same host and PCI bus id), and which. NCCL refuses two ranks of one node
    on one GPU (init.cc: "Duplicate GPU detected"), so that many ranks are in as many NCCL nodes: virtual
    nodes (NCCL_HOSTID) even when no NCCL log says so (nccl-tests' "Using devices" block alone)."""
    if attestation is None:
        return 1, ""
    by_gpu: dict[tuple[str, str], list[int]] = {}
    for rank in attestation.ranks:
        if rank.host is not None and rank.bus_id is not None:
            by_gpu.setdefault((rank.host, rank.bus_id), []).append(rank.rank)
    if not by_gpu:
        return 1, ""
    (host, bus), ranks = max(by_gpu.items(), key=lambda item: len(item[1]))
    return len(ranks), f"ranks {', '.join(map(str, sorted(ranks)))} share GPU {bus} on {host}"


def run_setting(result: RunResult | None, attestation: Attestation | None = None) -> RunSetting:
    """The layout of the run that ``result`` (and/or NCCL's log) describes."""
    meta_hosts = result.metadata.hosts if result is not None else []
    hosts = run_hosts(result, attestation) if result is not None else []
    if not hosts and attestation is not None:
        hosts = list(dict.fromkeys(physical_host(h) for h in attestation.hosts))
    nodes = (attestation.nnodes if attestation is not None else None) or len(set(meta_hosts)) or 1
    if attestation is not None and attestation.virtual_nodes:
        nodes = max(nodes, len(attestation.virtual_nodes))
    ranks = _ranks(result, attestation)
    notes: list[str] = []
    sharing, which = _ranks_sharing_a_gpu(attestation)
    if sharing > nodes:
        nodes = sharing
        notes.append(f"{which}: NCCL puts ranks of one GPU in different nodes, so {sharing} virtual nodes")
    per_node: int | None = None
    if ranks is not None and ranks % nodes == 0:
        per_node = ranks // nodes
    elif ranks is not None:
        notes.append(f"{ranks} ranks do not split evenly over {nodes} nodes: ranks per node unknown")
    env = _env(result, attestation)
    forced_socket = env.get("NCCL_NET", "").strip().lower() == "socket" or (
        nodes == 1 and _on(env, "NCCL_P2P_DISABLE") and _on(env, "NCCL_SHM_DISABLE")
    )
    backend = (result.metadata.backend or "").lower() if result is not None else ""
    devices = result.metadata.devices if result is not None else []
    cpu = backend == "gloo" or bool(devices and all(d.name == "cpu" for d in devices))
    return RunSetting(
        nodes=nodes,
        hosts=max(1, len(hosts)) if hosts else nodes,
        ranks_per_node=per_node,
        transport="socket" if forced_socket else "auto",
        nvls=_nvls(env, attestation),
        all_reduce_regime=_regime(env),
        socket_threads=_int(env, "NCCL_SOCKET_NTHREADS"),
        socks_per_thread=_int(env, "NCCL_NSOCKS_PERTHREAD"),
        ranks_per_process=_ranks_per_process(result),
        cpu_ranks=cpu,
        network_kind=attestation.network_kind
        if attestation is not None and attestation.uses_network
        else None,
        notes=tuple(notes),
    )
