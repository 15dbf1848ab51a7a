"""A published figure as the model sees it: the node it ran on (``figure_shape``), how it ran
(``figure_conditions``: ranks, hosts, transport, algorithm, socket threads, process layout), its situation
and the value the calibration fits (``figure_value``): busbw / ceiling, or on one host's sockets, where
no ceiling exists, the per-connection throughput busbw / share in GB/s.
"""

from __future__ import annotations

import re
from typing import Literal

from gpufabric.expect.conditions import RunConditions, Transport
from gpufabric.expect.gpus import short_model
from gpufabric.expect.published import PublishedFigure, PublishedNics
from gpufabric.expect.regimes import Path, Regime
from gpufabric.expect.situation import Situation, assess
from gpufabric.hardware import NicFacts, NicKind, NodeShape, NvLinkFacts

Basis = Literal["of-ceiling", "absolute"]


def nic_facts(nics: PublishedNics) -> tuple[NicFacts, ...]:
    """The NICs a figure states, one ``NicFacts`` each (none where the count is not known)."""
    kind = NicKind(nics.kind)
    return tuple(
        NicFacts(name=f"{kind.value}{i}", kind=kind, rate_gbps=nics.rate_gbps) for i in range(nics.count or 0)
    )


def figure_shape(figure: PublishedFigure) -> NodeShape:
    """The node a published figure was measured on, from the facts the figure states."""
    nvlink = (
        NvLinkFacts(
            generation=figure.nvlink.generation,
            links_per_gpu=figure.nvlink.links_per_gpu,
            link_gbytes_per_s=figure.nvlink.link_gbytes_per_s,
            nvswitch=figure.nvlink.nvswitch,
        )
        if figure.nvlink
        else None
    )
    nics = nic_facts(figure.nics) if figure.nics is not None else ()
    return NodeShape(
        source="given",
        instance_type=figure.instance_type,
        gpu_model=short_model(figure.gpu) or figure.gpu,
        gpu_count=figure.gpus_per_host or figure.gpus_per_node,
        nvlink=nvlink,
        nics=nics,
    )


def _env_int(figure: PublishedFigure, name: str) -> int | None:
    value = figure.env.get(name)
    return int(value) if value is not None and value.strip().lstrip("-").isdigit() else None


_ALGO_WORDS = re.compile(r"NCCL_ALGO=(\w+)")
_REGIMES = {"ring": Regime.RING, "tree": Regime.TREE, "nvls": Regime.NVLS, "nvlstree": Regime.NVLS,
            "collnetdirect": Regime.COLLNET, "collnetchain": Regime.COLLNET, "pat": Regime.PAT}  # fmt: skip


def figure_regime(figure: PublishedFigure) -> Regime | None:
    """The algorithm the source forced: the ``regime`` field, else NCCL_ALGO in its env or its notes."""
    if figure.regime is not None:
        return figure.regime
    match = _ALGO_WORDS.search(figure.notes)
    algo = figure.env.get("NCCL_ALGO") or (match.group(1) if match else None)
    return _REGIMES.get(algo.lower()) if algo else None


def figure_conditions(figure: PublishedFigure) -> RunConditions:
    """How the figure's run ran, as ``assess`` and ``expect`` take it."""
    forced: dict[Path, Transport] = {Path.SOCKET: "socket", Path.NET: "net"}
    transport = forced.get(figure.path, "auto")
    return RunConditions(
        ranks_per_node=figure.gpus_per_node,
        hosts=figure.physical_hosts,
        transport=transport,
        regime=figure_regime(figure),
        nvls=False if figure.env.get("NCCL_NVLS_ENABLE") == "0" else None,
        socket_threads=_env_int(figure, "NCCL_SOCKET_NTHREADS"),
        socks_per_thread=_env_int(figure, "NCCL_NSOCKS_PERTHREAD"),
        ranks_per_process=figure.ranks_per_process,
    )


def figure_situation(figure: PublishedFigure) -> Situation:
    """Path, regime and ceiling of the figure's run, as the model computes them."""
    return assess(figure_shape(figure), figure.collective, figure.nodes, figure_conditions(figure))


def figure_value(figure: PublishedFigure, situation: Situation) -> tuple[str, Basis, float] | None:
    """The figure's group and efficiency (busbw / ceiling), or where no ceiling exists (socket loopback)
    one connection's throughput, busbw / the collective's share of it (``Bound.share``). A figure above
    its rule regime's ceiling, with no algorithm stated, ran the faster regime the shape allows (NVLS,
    NVLSTree): no ring can pass its ceiling."""
    ceiling = situation.ceiling_gbps
    if ceiling is not None and figure.busbw_gbps > ceiling and figure_regime(figure) is None:
        faster = [a for a in situation.alternatives if a.ceiling_gbps >= figure.busbw_gbps]
        if faster:
            return faster[0].group, "of-ceiling", figure.busbw_gbps / faster[0].ceiling_gbps
    if ceiling is not None:
        return situation.group, "of-ceiling", figure.busbw_gbps / ceiling
    if situation.loopback:
        return situation.group, "absolute", figure.busbw_gbps / (situation.bound.share or 1.0)
    return None


def measures_its_path(figure: PublishedFigure) -> bool:
    """Fitted: healthy figures, and socket fallbacks: degraded for their node's fabric, they are healthy
    measurements of the socket path itself."""
    socket_run = figure.cause == "socket-fallback" and figure.path is Path.SOCKET
    nccl = figure.library == "nccl"
    return nccl and not figure.holdout and (figure.health == "healthy" or socket_run)
