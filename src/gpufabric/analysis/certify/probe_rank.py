"""The rank program of certify's preflight stage: one process per node looks at the node it runs on.

``python -m gpufabric.analysis.certify.probe_rank --out DIR [--expect F] [--gpus N] [--instance-type T]``
runs preflight's checks here (``analysis.preflight``: driver and GPUs, RDMA devices, net plugin,
peer memory, memlock, /dev/shm, the interfaces NCCL_SOCKET_IFNAME names), reads the versions parity
compares (NCCL's from its library's banner, the net plugin's file, the driver's and CUDA's from the
driver) and the fabric environment, and writes ``DIR/node-<rank>.json`` (``NodeFacts``). The rank is
the node (one rank per node), from whichever launcher started it. Nothing heavy is imported: no torch.
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import socket
import sys
from collections.abc import Mapping
from pathlib import Path

from gpufabric.analysis.certify.model import NodeFacts, Versions
from gpufabric.analysis.certify.node_env import fabric_env, node_env_from
from gpufabric.analysis.preflight import preflight
from gpufabric.analysis.preflight_probe import Probe

FACTS_PATTERN = "node-{index:05d}.json"
_DRIVER = re.compile(r"Kernel Module\s+(?P<version>[0-9][0-9.]*)")
_CUDA = re.compile(r"CUDA Version:\s*(?P<version>[0-9][0-9.]*)")


def facts_path(out_dir: Path, index: int) -> Path:
    return out_dir / FACTS_PATTERN.format(index=index)


def net_plugins(environ: Mapping[str, str]) -> str | None:
    """The libnccl-net plugin files NCCL would load: ``NCCL_NET_PLUGIN`` when set, else those on
    LD_LIBRARY_PATH (NCCL's own search), by file name so hosts with other install paths still agree."""
    named = environ.get("NCCL_NET_PLUGIN")
    if named:
        return os.path.basename(named)
    dirs = [d for d in environ.get("LD_LIBRARY_PATH", "").split(":") if d]
    files = sorted({os.path.basename(f) for d in dirs for f in glob.glob(f"{d}/libnccl-net*.so*")})
    return ",".join(files) or None


def read_versions(probe: Probe) -> Versions:
    """NCCL, net plugin, driver and CUDA as this node shows them (None: not present here)."""
    from gpufabric import __version__
    from gpufabric.capabilities import find_libnccl

    library = find_libnccl(probe.environ)
    driver_text = probe.read("/proc/driver/nvidia/version") or ""
    driver = _DRIVER.search(driver_text)
    smi = probe.command("nvidia-smi")
    cuda = _CUDA.search(smi.stdout) if smi is not None and smi.returncode == 0 else None
    return Versions(
        nccl=library.version if library else None,
        nccl_path=library.path if library else None,
        net_plugin=net_plugins(probe.environ),
        driver=driver.group("version") if driver else None,
        cuda=cuda.group("version") if cuda else (library.cuda if library else None),
        gpufabric=__version__,
    )


def node_facts(
    index: int,
    probe: Probe,
    *,
    expect: str | None,
    gpus: int | None,
    instance_type: str | None,
    override: str | None = None,
) -> NodeFacts:
    """Everything the preflight stage knows about one node, seen through ``probe``."""
    report = preflight(expect=expect, gpus=gpus, instance_type=instance_type, probe=probe)
    return NodeFacts(
        node_index=index,
        host=socket.gethostname(),
        versions=read_versions(probe),
        fabric_env=fabric_env(probe.environ),
        preflight=report.subjects[0],
        node_env_override=override,
    )


def main(argv: list[str] | None = None) -> int:
    from gpufabric.bench.identity import rank_identity

    parser = argparse.ArgumentParser(prog="gpufabric.analysis.certify.probe_rank")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--expect")
    parser.add_argument("--gpus", type=int)
    parser.add_argument("--instance-type")
    args = parser.parse_args(argv)
    index = rank_identity(os.environ).rank
    override = node_env_from(os.environ)
    applied = None
    if override is not None and override.node == index:
        os.environ.update(override.env)  # as a node whose image sets them: every check below sees them
        applied = override.spec
    facts = node_facts(
        index,
        Probe(environ=dict(os.environ)),
        expect=args.expect,
        gpus=args.gpus,
        instance_type=args.instance_type,
        override=applied,
    )
    args.out.mkdir(parents=True, exist_ok=True)
    target = facts_path(args.out, index)
    partial = target.with_suffix(".part")
    partial.write_text(facts.model_dump_json(indent=2) + "\n", encoding="utf-8")
    partial.replace(target)  # whole or absent: the parent never reads half a file
    print(f"certify probe: node {index} on {facts.host}: {facts.preflight.verdict.value}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
