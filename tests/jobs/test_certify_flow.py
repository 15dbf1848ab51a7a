"""``gpufabric certify`` end to end on 4 local CPU nodes (gloo ranks, as isolate's CPU tests run them),
node0003 slowed by the test fault (200 ms before every call, as in isolate's CPU test): preflight and
parity pass every node, each node's own sweep finishes (gloo ranks: recorded, not judged by a model of
NCCL, the missing fact said), and the group tests between nodes convict node0003 as a node (never a
link naming a healthy partner), whose certificate fails with reason ``slow`` and the retests' proof,
within isolate's round bound. The dry run printed beforehand is the plan the run recorded. The same
group tests over 4 clean nodes accuse nobody.

One faulted run is shared by the tests of this module; every group round is a job of 4 torch ranks, so
the settings keep rounds few and short (a 2-core box): isolate's default proof (alpha 1%, which stops
retesting as soon as the proof is in: 2 confirm rounds for a node this slow) and 2 iterations a batch
(healthy pairs still time 0.1 s batches; the slowed pair's 0.4 s). The clean check runs the stage
between nodes alone (the stages before it have nothing to say about accusations). The budget's cost
model is timed in ``benchmarks/scale/certify_plan.py``; here a 4096-node plan is only checked to complete.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from plan_checks import gpufabric, recorded, without_ports

from gpufabric.analysis.certify import CERTIFICATE_SCHEMA, NodeCertificate, NodeStatus
from gpufabric.analysis.isolate import round_bound
from gpufabric.jobs import CertifyRequest, Execution, prepare_certify
from gpufabric.jobs.certify_run import CertifyState
from gpufabric.jobs.certify_stages import between_stage
from gpufabric.report import Format, render_document

FAULT = "slow:rank=3:delay_ms=200"
# As isolate's CPU test: flag only groups below a quarter of the best (this box's healthy pairs vary 2x).
MIN_DROP, ITERS = 0.75, 2
ARGS = ["--nodes", "4", "--min-drop", str(MIN_DROP), "--iters", str(ITERS), "--node-max-bytes", "1K"]


@pytest.fixture(scope="module")
def flow(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[subprocess.CompletedProcess[str], subprocess.CompletedProcess[str], Path]:
    root = tmp_path_factory.mktemp("certify")
    run_dir = root / "run"
    env = {"GPUFABRIC_FAULT": FAULT}
    args = [*ARGS, "--run-dir", str(run_dir)]
    dry = gpufabric("certify", [*args, "--dry-run"], root, env)
    assert dry.returncode == 0, dry.stderr
    assert not run_dir.exists()  # the dry run wrote nothing
    real = subprocess.run(
        ["timeout", "600", *gpufabric_argv(), "certify", *args, "--format", "json"],
        capture_output=True,
        text=True,
        check=False,
        cwd=root,
        env={**__import__("os").environ, "CUDA_VISIBLE_DEVICES": "", **env},
    )
    return dry, real, run_dir


def gpufabric_argv() -> list[str]:
    import sys

    return [sys.executable, "-m", "gpufabric.cli"]


@pytest.mark.slow
def test_the_slowed_node_fails_with_reason_slow_and_the_others_pass(
    flow: tuple[subprocess.CompletedProcess[str], subprocess.CompletedProcess[str], Path],
) -> None:
    _, real, run_dir = flow
    assert real.returncode == 1, real.stderr  # a node failed
    report = json.loads(real.stdout)
    assert report["summary"]["nodes"] == {
        "node0000": "pass",
        "node0001": "pass",
        "node0002": "pass",
        "node0003": "fail",
    }
    cert = NodeCertificate.model_validate_json((run_dir / "certificates" / "node0003.json").read_text())
    assert cert.schema_ == CERTIFICATE_SCHEMA and cert.status.value == "fail"
    (slow,) = [r for r in cert.reasons if r.code == "slow"]  # a node's conviction ("slow-link": a link's)
    assert slow.stage == "between" and any(line.startswith("proof: ") for line in slow.evidence)
    assert slow.figures and slow.figures[0].measured is not None and slow.figures[0].expected
    assert cert.stages["preflight"] == "pass" and cert.stages["parity"] == "pass"
    isolate = json.loads((run_dir / "between" / "isolate.json").read_text())
    assert [
        (s["kind"], s["nodes"]) for s in isolate["report"]["suspects"] if s["verdict"] == "convicted"
    ] == [("node", ["node0003"])]
    assert isolate["report"]["rounds"] <= round_bound(4), isolate["report"]["round_log"]
    # gloo ranks: the node's own figure is recorded, not judged by a model of NCCL on GPUs (said).
    (alone,) = [f for f in cert.findings if f.stage == "node"]
    assert alone.figures and all(
        f.expected is None and f.source.startswith("no expected figure: gloo ranks on CPU")
        for f in alone.figures
    )
    healthy = NodeCertificate.model_validate_json((run_dir / "certificates" / "node0001.json").read_text())
    assert healthy.status.value == "pass" and healthy.reasons == []
    assert healthy.inputs_digest.startswith("sha256:") and healthy.expires > healthy.created
    assert healthy.stages["transport"] == "pass"  # gloo: said there is no NCCL transport to prove
    summary = json.loads((run_dir / "certify-summary.json").read_text())
    assert summary["schema"] == "gpufabric.certify-summary/1" and summary["counts"]["fail"] == 1
    assert "node0003" in (run_dir / "certify-report.html").read_text()


@pytest.mark.slow
def test_the_dry_run_printed_the_plan_and_the_probe_job_the_run_recorded(
    flow: tuple[subprocess.CompletedProcess[str], subprocess.CompletedProcess[str], Path],
) -> None:
    dry, _, run_dir = flow
    notes, printed = dry.stdout.split("# launcher: ", 1)
    assert notes.startswith("# certify 4 node(s) (--nodes 4) via local")
    assert f"fault injected: GPUFABRIC_FAULT={FAULT}" in notes
    assert without_ports("# launcher: " + printed) == without_ports(
        recorded(run_dir / "preflight" / "plan.json")
    )
    plan = json.loads((run_dir / "certify-plan.json").read_text())
    for stage in plan["stages"]:
        assert f"# stage {stage['stage']}: {stage['what']}; {stage['jobs']} job(s)" in notes


@pytest.mark.slow
def test_group_tests_over_clean_nodes_accuse_nobody(tmp_path: Path) -> None:
    request = CertifyRequest(nodes=4, min_drop=MIN_DROP, iters=ITERS, run_dir=tmp_path / "run")
    prepared = prepare_certify(request, Execution(environ={"CUDA_VISIBLE_DEVICES": ""}))
    prepared.run_dir.mkdir()
    state = CertifyState(prepared, None)
    between_stage(state)
    found = {node: [(f.code, f.status.value) for f in findings] for node, findings in state.findings.items()}
    assert all(f.status is NodeStatus.PASS for findings in state.findings.values() for f in findings), found
    assert not any(code in ("slow", "slow-link") for codes in found.values() for code, _ in codes), found
    isolate = json.loads((prepared.run_dir / "between" / "isolate.json").read_text())
    assert [s for s in isolate["report"]["suspects"] if s["verdict"] == "convicted"] == []


def test_a_4096_node_plan_and_its_cost_are_computed(tmp_path: Path) -> None:
    request = CertifyRequest(nodes=4096, budget_s=10**7, run_dir=tmp_path / "run")
    prepared = prepare_certify(request, Execution(environ={"CUDA_VISIBLE_DEVICES": ""}))
    assert len(prepared.plan.nodes) == 4096 and prepared.plan.estimate_s > 0
    between = next(s for s in prepared.plan.stages if s.stage == "between")
    assert between.rounds == 2 * 12 + 2
    assert "certify 4096 node(s)" in render_document(prepared, Format.TEXT)
    assert not (tmp_path / "run").exists()


def test_a_plan_over_the_budget_is_refused_in_one_line(tmp_path: Path) -> None:
    from gpufabric.errors import UsageError

    with pytest.raises(
        UsageError, match=r"--budget 60: certifying 64 node\(s\) needs about \d+ s .*pass --budget"
    ):
        prepare_certify(CertifyRequest(nodes=64, budget_s=60, run_dir=tmp_path / "r"), Execution(environ={}))
