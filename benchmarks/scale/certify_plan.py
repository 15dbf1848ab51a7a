"""Time certify's plan and its cost for a simulated 4096-node cluster (the issue's target: under 1 s).

    PYTHONPATH=src python benchmarks/scale/certify_plan.py [NODES]

Prepares ``certify --nodes N`` (the plan, the probe job's launch plan for N local ranks) and renders
its dry run, 5 times, and prints each time; nothing runs and nothing is written.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from gpufabric.jobs import CertifyRequest, Execution, prepare_certify
from gpufabric.report import Format, render_document


def main() -> None:
    nodes = int(sys.argv[1]) if len(sys.argv) > 1 else 4096
    with tempfile.TemporaryDirectory() as root:
        for attempt in range(5):
            started = time.perf_counter()
            request = CertifyRequest(nodes=nodes, budget_s=10**7, run_dir=Path(root) / f"run{attempt}")
            prepared = prepare_certify(request, Execution(environ={"CUDA_VISIBLE_DEVICES": ""}))
            planned = time.perf_counter() - started
            text = render_document(prepared, Format.TEXT)
            total = time.perf_counter() - started
            print(
                f"{nodes} nodes: plan {planned:.3f} s, plan + dry-run text {total:.3f} s "
                f"({len(text)} chars; estimate {prepared.plan.estimate_s:.0f} s)"
            )


if __name__ == "__main__":
    main()
