"""Running certify's stages (``run_certify_job``): the probe job, parity, each node alone, the group
tests between the nodes still in, the transport proof; then the certificates, the summary, the HTML
report and the actions. A node failed by a stage is left out of the stages after it, with its reason.

Nothing one node does takes the others' verdicts with it: a job that fails or passes its time limit
fails the nodes it measured (with the launcher's one line), the others keep theirs. A stop signal
(Ctrl-C) ends the stage it arrived in; what was measured is written all the same, and the summary says
where the run stopped. A stage that would start after ``--budget`` is spent is not run, and said.
"""

from __future__ import annotations

from collections.abc import Callable

from gpufabric.analysis.certify import (
    CertifyReport,
    Finding,
    NodeFacts,
    NodeStatus,
    parity_findings,
    preflight_findings,
)
from gpufabric.analysis.certify.probe_rank import facts_path
from gpufabric.errors import GpufabricError
from gpufabric.jobs.certify import PreparedCertify
from gpufabric.jobs.certify_finish import HtmlPage, finish
from gpufabric.jobs.certify_nodes import node_stage
from gpufabric.jobs.certify_stages import between_stage
from gpufabric.jobs.certify_state import CertifyProgress, CertifyState
from gpufabric.launch.signals import Interrupted
from gpufabric.outputs import write_output


def _stage_timeout(prepared: PreparedCertify, stage: str) -> float:
    return next(s.timeout_s for s in prepared.plan.stages if s.stage == stage)


def preflight_stage(state: CertifyState) -> None:
    """Run the prepared probe job; read each node's facts; judge preflight and parity."""
    prepared = state.prepared
    state.progress("preflight")
    outcome = prepared.probe_launcher.execute(
        prepared.probe,
        on_output=prepared.execution.on_output,
        timeout_s=state.limit(_stage_timeout(prepared, "preflight")),
    )
    state.stages_run.append("preflight")
    why = outcome.failure or (
        "the probe job passed its time limit" if outcome.timed_out else "the probe wrote nothing"
    )
    for index, name in enumerate(prepared.names):
        path = facts_path(prepared.run_dir / "preflight", index)
        try:
            facts = NodeFacts.model_validate_json(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            state.add(
                name,
                [
                    Finding(
                        stage="preflight",
                        code="preflight:unreachable",
                        status=NodeStatus.FAIL,
                        text=f"no preflight facts from this node: {why}",
                    )
                ],
            )
            continue
        state.facts[name] = facts
        state.add(name, preflight_findings(facts))
    state.progress("parity")
    probed = {name: state.facts[name] for name in prepared.names if name in state.facts}
    for name, findings in parity_findings(probed).items():
        state.add(name, findings)
    state.stages_run.append("parity")


def _run_stage(state: CertifyState, stage: str, body: Callable[[], None]) -> None:
    out = [n for n in state.prepared.names if state.failed(n)]
    state.skip(stage, out, "failed an earlier stage")
    if state.left_s() <= 0:
        state.skip(stage, state.prepared.names, "--budget spent")
        state.notes.append(f"stage {stage} not run: --budget {state.prepared.plan.budget_s:g} s spent")
        return
    body()
    state.stages_run.append(stage)


def run_certify_job(
    prepared: PreparedCertify, *, html_page: HtmlPage, on_progress: CertifyProgress | None = None
) -> CertifyReport:
    """Run every stage of ``prepared`` and write what it found (see the module's docstring); ``html_page``
    renders the HTML report (``gpufabric.report.certify_html``)."""
    state = CertifyState(prepared, on_progress)
    prepared.run_dir.mkdir(parents=True, exist_ok=True)
    write_output(prepared.run_dir / "certify-plan.json", prepared.plan.model_dump_json(indent=2) + "\n")
    (prepared.run_dir / "preflight").mkdir(exist_ok=True)
    write_output(prepared.run_dir / "preflight" / "plan.json", prepared.probe.recorded_json())
    stage = "preflight"
    interrupted: str | None = None
    signal_exit: int | None = None
    try:
        preflight_stage(state)
        stage = "node"
        _run_stage(state, "node", lambda: node_stage(state))
        stage = "between"
        _run_stage(state, "between", lambda: between_stage(state))
        state.stages_run.append("transport")  # read with each node's own sweep
    except Interrupted as exc:
        interrupted, signal_exit = f"stage {stage}: {exc.signal_name}", exc.exit_code
    except GpufabricError as exc:  # a stage's own error (not one node's): the nodes it left keep theirs
        interrupted = f"stage {stage}: {' '.join(str(exc).split())}"
    return finish(state, interrupted=interrupted, signal_exit=signal_exit, html_page=html_page)
