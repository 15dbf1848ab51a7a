"""Benchmark: plan and render the manifests of a 4096-node job, end to end (target: under 1 s).

Timed stages, each the public API a user's `gpufabric plan` / `gpufabric launch --launcher kubernetes`
goes through: ``gpufabric.planner.plan`` (resolution + the planner's Kubernetes workload: per-pod
manifests up to ``POD_MANIFESTS_MAX_NODES`` nodes, one Indexed Job + headless Service above), the
Kubernetes launcher's ``render`` (Indexed Job + headless Service with the planner's pod patch merged in),
YAML serialisation of all those manifests (what lands on disk / goes to the API server), and the whole
plan dumped as YAML the way `gpufabric plan --format yaml` prints it. Plus the CLI as a user runs it
(`gpufabric plan --nodes 4096 -t p5.48xlarge`, a fresh process, interpreter start included), and, for
scale, the same CLI at 2 nodes (a fixed cost: interpreter start, imports, catalog load).

    .venv/bin/python benchmarks/scale/plan_render.py [--nodes 4096] [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from gpufabric.cli.catalog import _dump
from gpufabric.launch.base import RankProgram
from gpufabric.launch.kubernetes import KubernetesLauncher, KubernetesOptions
from gpufabric.planner import PlanRequest, Platform, plan

DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def once(nodes: int, instance: str) -> dict[str, float | int]:
    t0 = time.perf_counter()
    result = plan(PlanRequest(instance_type=instance, platform=Platform.KUBERNETES, nodes=nodes))
    t1 = time.perf_counter()
    program = RankProgram(
        argv=["python", "-m", "gpufabric.engines.torch.rank"],
        env=dict(result.env),
        nranks=nodes,
        nodes=nodes,
        gpus_per_node=result.gpus_per_node,
        workdir=Path("/tmp/run"),
        label="isolate-scale",
    )
    patch: dict[str, Any] = result.documents["kubernetes.pod_config"]
    options = KubernetesOptions(image="nvcr.io/nvidia/pytorch:25.01-py3", plan_patch=patch)
    launch_plan = KubernetesLauncher(options).render(program)
    t2 = time.perf_counter()
    docs = result.documents
    planned = docs.get("kubernetes.pods") or [docs["kubernetes.job"], docs["kubernetes.service"]]
    documents = [*planned, *launch_plan.manifests]
    text = yaml.dump_all(documents, Dumper=DUMPER, sort_keys=False)
    t3 = time.perf_counter()
    plan_yaml = _dump(result.model_dump(mode="json", exclude={"request"}), "yaml")  # what the CLI prints
    t4 = time.perf_counter()
    return {
        "plan_s": t1 - t0,
        "launcher_render_s": t2 - t1,
        "yaml_s": t3 - t2,
        "total_s": t3 - t0,
        "cli_dump_s": t4 - t3,
        "documents": len(documents),
        "yaml_bytes": len(text),
        "plan_yaml_bytes": len(plan_yaml),
    }


def cli_once(nodes: int, instance: str) -> float:
    gpufabric = Path(sys.executable).with_name("gpufabric")
    t0 = time.perf_counter()
    proc = subprocess.run(
        [str(gpufabric), "plan", "-t", instance, "--nodes", str(nodes), "--format", "yaml"],
        capture_output=True,
        check=True,
    )
    elapsed = time.perf_counter() - t0
    assert proc.stdout, "gpufabric plan printed nothing"
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nodes", type=int, default=4096)
    parser.add_argument("--instance", default="p5.48xlarge")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    once(64, args.instance)  # imports and catalog load happen once per process; time the steady state
    runs = [once(args.nodes, args.instance) for _ in range(args.repeats)]
    cli = [cli_once(args.nodes, args.instance) for _ in range(max(1, args.repeats // 2))]
    cli_2 = [cli_once(2, args.instance) for _ in range(max(1, args.repeats // 2))]
    summary = {
        "nodes": args.nodes,
        "instance": args.instance,
        "repeats": args.repeats,
        **{f"median_{k}": statistics.median(float(r[k]) for r in runs) for k in runs[0] if k.endswith("_s")},
        "max_total_s": max(float(r["total_s"]) for r in runs),
        "documents": runs[0]["documents"],
        "yaml_bytes": runs[0]["yaml_bytes"],
        "plan_yaml_bytes": runs[0]["plan_yaml_bytes"],
        "cli_wall_s": cli,
        "cli_wall_s_2_nodes": cli_2,
        "yaml_dumper": DUMPER.__name__,
    }
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
