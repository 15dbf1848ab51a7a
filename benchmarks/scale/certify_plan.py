"""Time certify's plan and its cost for a simulated 4096-node cluster (the issue's target: under 1 s), on
the three launchers: local ranks (the node stage one job after another), an mpirun hostfile and a Slurm
node list (the node stage ``--node-parallel`` jobs at once, the default).

    PYTHONPATH=src python benchmarks/scale/certify_plan.py [NODES]

Prepares ``certify`` (the nodes, the plan with isolate's own cost of the search, the probe job's launch
plan) and renders its dry run, 3 times per launcher, and prints each time with the plan's estimate and
whether it fits the default ``--budget``; nothing runs and nothing is written.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from gpufabric.errors import UsageError
from gpufabric.jobs import CertifyRequest, Execution, prepare_certify
from gpufabric.report import Format, render_document

BIG_BUDGET = 10**7


def main() -> None:
    nodes = int(sys.argv[1]) if len(sys.argv) > 1 else 4096
    with tempfile.TemporaryDirectory() as root:
        names = [f"gpu{i:05d}" for i in range(nodes)]
        listing = Path(root) / "nodes.txt"
        listing.write_text("\n".join(names) + "\n")
        sources = {
            "local": {"nodes": nodes},
            "mpirun": {"hostfile": listing, "on": "mpirun"},
            "slurm": {"node_list": listing, "on": "slurm"},
        }
        for launcher, fields in sources.items():
            for attempt in range(3):
                run_dir = Path(root) / f"{launcher}{attempt}"
                started = time.perf_counter()
                request = CertifyRequest.model_validate(
                    {**fields, "budget_s": BIG_BUDGET, "run_dir": run_dir}
                )
                prepared = prepare_certify(request, Execution(environ={"CUDA_VISIBLE_DEVICES": ""}))
                planned = time.perf_counter() - started
                text = render_document(prepared, Format.TEXT)
                total = time.perf_counter() - started
                stages = ", ".join(
                    f"{s.stage} {s.estimate_s:.0f} s" for s in prepared.plan.stages if s.estimate_s
                )
                try:
                    prepare_certify(request.model_copy(update={"budget_s": CertifyRequest().budget_s}),
                                    Execution(environ={"CUDA_VISIBLE_DEVICES": ""}))  # fmt: skip
                    fits = "fits"
                except UsageError:
                    fits = "does not fit"
                print(
                    f"{nodes} nodes via {launcher}: plan {planned:.3f} s, plan + dry-run text {total:.3f} s "
                    f"({len(text)} chars); estimate {prepared.plan.estimate_s:.0f} s ({stages}), {fits} the "
                    f"default --budget {CertifyRequest().budget_s:g} s"
                )


if __name__ == "__main__":
    main()
