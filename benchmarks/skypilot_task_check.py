"""Load every SkyPilot task the planner writes (catalog shapes x {VM, Kubernetes}) with SkyPilot's own
``Task.from_yaml_config`` and ``Resources`` (offline: no cloud credentials, no network).

SkyPilot is too heavy for the project's virtualenv, so it runs in its own::

    python3 -m venv /tmp/skyvenv && /tmp/skyvenv/bin/pip install skypilot==0.14.1
    python benchmarks/skypilot_task_check.py --sky-python /tmp/skyvenv/bin/python

Prints one line per task that SkyPilot rejects and a summary; exit 1 if any is rejected. The figures of
the last run are in docs/planner-references.md.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from gpufabric.catalog import list_instances
from gpufabric.planner import PlanRequest, Platform, plan

LOADER = r"""
import json, sys
from sky import task as sky_task
results = {}
for path in sys.argv[1:]:
    config = json.load(open(path))
    try:
        task = sky_task.Task.from_yaml_config(config)
        tiers = sorted(str(r.network_tier.value if r.network_tier else None) for r in task.resources)
        results[path] = "ok " + ",".join(tiers)
    except Exception as exc:  # SkyPilot raises ValueError / jsonschema errors
        results[path] = f"rejected {type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
print(json.dumps(results))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sky-python", required=True, help="a python with skypilot==0.14.1 installed")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for inst in list_instances():
            for labels in (None, {"node.kubernetes.io/instance-type": inst.name}):
                request = (
                    PlanRequest(node_labels=labels, platform=Platform.SKYPILOT)
                    if labels
                    else PlanRequest(instance_type=inst.name, platform=Platform.SKYPILOT)
                )
                try:
                    task = plan(request).documents["skypilot.task"]
                except Exception as exc:  # a shape a label cannot name: not a SkyPilot question
                    print(f"skip {inst.name} {'k8s' if labels else 'vm'}: {exc}")
                    continue
                path = Path(tmp) / f"{inst.name}-{'k8s' if labels else 'vm'}.json"
                path.write_text(json.dumps(task))
                paths.append(str(path))
        done = subprocess.run(
            [args.sky_python, "-c", LOADER, *paths], capture_output=True, text=True, check=False, timeout=600
        )
        if done.returncode != 0:
            print(done.stderr[-2000:], file=sys.stderr)
            return 2
        results = json.loads(done.stdout.strip().splitlines()[-1])
    rejected = {Path(p).name: r for p, r in results.items() if not r.startswith("ok")}
    for name, reason in sorted(rejected.items()):
        print(f"{name}: {reason}")
    tiers = {Path(p).name: r.removeprefix("ok ") for p, r in results.items() if r.startswith("ok")}
    best = sorted(n for n, t in tiers.items() if t == "best")
    print(
        f"{len(results)} tasks loaded by SkyPilot's Task.from_yaml_config: "
        f"{len(results) - len(rejected)} ok, {len(rejected)} rejected; "
        f"network_tier best on {len(best)}: {', '.join(best)}"
    )
    return 1 if rejected else 0


if __name__ == "__main__":
    sys.exit(main())
