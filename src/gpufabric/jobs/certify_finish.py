"""The end of a certify run, whatever ended it: every node's certificate, the actions (applied with
``--apply`` unless the run was cut short), the HTML report and the summary, written to the run directory.

A file that cannot be written (a full disk) is one line in ``write_errors``; the verdicts are still
returned and printed, so no node's verdict is lost with the file.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from gpufabric.analysis.certify import CertifyReport, NodeCertificate, certificate, summary
from gpufabric.analysis.certify.model import Action
from gpufabric.jobs.certify import CERTIFICATES_DIR, HTML_NAME, SUMMARY_NAME
from gpufabric.jobs.certify_actions import apply_kubernetes, apply_slurm, plan_actions
from gpufabric.outputs import describe_write_error, write_output

if TYPE_CHECKING:
    from gpufabric.jobs.certify_state import CertifyState

HtmlPage = Callable[[CertifyReport], str]
"""The run's HTML report page: ``report.certify_html``, handed in by the caller (the CLI) because the
jobs sit below ``report`` (``report.prepared_render`` reads the jobs; ``tests/test_import_graph.py``)."""


def _settings(state: CertifyState) -> dict[str, Any]:
    prepared = state.prepared
    return {
        **prepared.request.model_dump(mode="json"),
        "launcher": prepared.plan.launcher,
        "fault": prepared.fault.spec if prepared.fault else None,
    }


def _apply(
    state: CertifyState, actions: list[Action], certificates: dict[str, NodeCertificate]
) -> list[Action]:
    prepared = state.prepared
    if prepared.action_target == "slurm":
        return apply_slurm(actions, prepared.environ)
    from kubernetes import client

    from gpufabric.launch.kubernetes_options import KubernetesOptions
    from gpufabric.launch.kubernetes_run import load_api_client

    return apply_kubernetes(actions, certificates, client.CoreV1Api(load_api_client(KubernetesOptions())))


def finish(
    state: CertifyState, *, interrupted: str | None, signal_exit: int | None, html_page: HtmlPage
) -> CertifyReport:
    prepared = state.prepared
    settings, run_dir = _settings(state), str(prepared.run_dir)
    if interrupted:  # every stage a node did not reach says why
        for name in prepared.names:
            state.skip_all(name, interrupted)
    certificates = {
        name: certificate(
            name,
            state.findings[name],
            facts=state.facts.get(name),
            settings=settings,
            not_run=state.not_run[name],
            created=state.created,
            valid_hours=prepared.plan.valid_hours,
            run_dir=run_dir,
        )
        for name in prepared.names
    }
    numbered = prepared.plan.node_source.startswith("--nodes")
    actions, notes = plan_actions(prepared.action_target, certificates, numbered=numbered)
    if prepared.request.apply and actions and not interrupted:
        actions = _apply(state, actions, certificates)
    elif prepared.request.apply and interrupted:
        notes.append(f"actions not applied: the run was cut short ({interrupted})")
    errors: list[str] = []
    paths: dict[str, str] = {}
    for name, cert in certificates.items():
        path = prepared.run_dir / CERTIFICATES_DIR / f"{name}.json"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_output(path, cert.model_dump_json(indent=2, by_alias=True) + "\n")
            paths[name] = str(path)
        except OSError as exc:
            errors.append(f"{path}: {describe_write_error(path, exc)}")
    html_path = prepared.run_dir / HTML_NAME
    document = summary(
        certificates,
        paths,
        stages_run=state.stages_run,
        interrupted=interrupted,
        notes=[*prepared.plan.notes, *state.notes, *notes],
        actions=actions,
        html=str(html_path),
        run_dir=run_dir,
        created=state.created,
        elapsed_s=time.monotonic() - state.started,
        budget_s=prepared.plan.budget_s,
    )
    report = CertifyReport(
        plan=prepared.plan,
        certificates=certificates,
        summary=document,
        signal_exit=signal_exit,
        write_errors=errors,
    )
    summary_json = document.model_dump_json(indent=2, by_alias=True) + "\n"
    for path, text in ((html_path, html_page(report)), (prepared.run_dir / SUMMARY_NAME, summary_json)):
        try:
            write_output(path, text)
        except OSError as exc:
            errors.append(f"{path}: {describe_write_error(path, exc)}")
    return report.model_copy(update={"write_errors": errors})
