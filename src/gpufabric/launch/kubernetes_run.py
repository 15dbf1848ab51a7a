"""The Kubernetes launcher, running half: apply the rendered objects with the official client, follow the
pods (state and logs, prefixed by node), and delete everything we created on success, failure, timeout
or Ctrl-C/SIGTERM, so no object and no pod is left behind. The job is bounded like the other launchers:
``--timeout``, the installed watchdog (the bench's stage deadlines, ``processes.current_watchdog``), and,
with no ``--timeout``, ``KubernetesOptions.start_timeout_s`` for pods that never start (unschedulable).

Kube config comes from the usual places: ``--kubeconfig``/``KUBECONFIG``/``~/.kube/config``, else the
in-cluster service account. Tests pass an ``ApiClient`` whose REST client records requests and answers
them (the transport seam); against a real cluster nothing is replaced.

Against a real cluster (not run in this project's tests, which have none):

    gpufabric launch nccl_efa.yaml --on kubernetes --dry-run   # manifests, schema-checked, redacted
    gpufabric launch nccl_efa.yaml --on kubernetes [--namespace NS] [--kubeconfig F] [--context C] [--keep]
    kubectl get jobs,pods,svc -l gpufabric.io/job=<name>   # what it created (deleted after, unless --keep)

The pods find each other as ``<name>-<index>.<name>`` through the headless Service; a run script that
starts mpirun from node 0 (as the seeds' do) also needs sshd in the image, which SkyPilot sets up and a
plain Job does not: prefer a run that starts torchrun on every node.
"""

from __future__ import annotations

import time
from typing import Any

from gpufabric._optional import require
from gpufabric.errors import LaunchError
from gpufabric.launch.base import LaunchOutcome, LaunchPlan, OutputSink, RankExit
from gpufabric.launch.kubernetes_options import JOB_NAME_LABEL, MAIN_CONTAINER, KubernetesOptions
from gpufabric.launch.output import last_output_clause
from gpufabric.launch.process_exits import describe_returncode
from gpufabric.launch.processes import LAST_LINES, current_watchdog
from gpufabric.launch.signals import Interrupted

INDEX_LABEL = "batch.kubernetes.io/job-completion-index"


def load_api_client(options: KubernetesOptions) -> Any:
    """An ApiClient from kube config (file or in-cluster); one line with the fix when there is none."""
    require("kubernetes", extra="kubernetes", for_what="launch --on kubernetes")
    from kubernetes import client
    from kubernetes import config as kube_config

    config: Any = kube_config  # its loaders are untyped
    try:
        return config.new_client_from_config(config_file=options.kubeconfig, context=options.context)
    except Exception as file_error:  # the loader raises ConfigException, FileNotFoundError, TypeError ...
        try:
            config.load_incluster_config()
            return client.ApiClient()
        except config.ConfigException:
            where = options.kubeconfig or "KUBECONFIG / ~/.kube/config"
            raise LaunchError(
                f"no usable Kubernetes config ({where}: {file_error}; not inside a cluster either); "
                "run `aws eks update-kubeconfig --name CLUSTER` or `gcloud container clusters "
                "get-credentials CLUSTER`, or pass --kubeconfig FILE"
            ) from file_error


def run_kubernetes_plan(
    plan: LaunchPlan,
    options: KubernetesOptions,
    *,
    api_client: Any = None,
    on_output: OutputSink | None,
    timeout_s: float | None,
) -> LaunchOutcome:
    require("kubernetes", extra="kubernetes", for_what="launch --on kubernetes")
    from kubernetes import client

    api = api_client if api_client is not None else load_api_client(options)
    core, batch = client.CoreV1Api(api), client.BatchV1Api(api)
    started = time.monotonic()
    created: list[tuple[str, str]] = []
    manifests: list[Any] = list(plan.manifests)
    name = next(m["metadata"]["name"] for m in manifests if m["kind"] == "Job")
    namespace = options.namespace
    follower = _PodFollower(core, namespace, name, on_output)
    watchdog = current_watchdog()
    try:
        for manifest in manifests:
            _create(core, batch, manifest, namespace)
            created.append((manifest["kind"], manifest["metadata"]["name"]))
        reason: str | None = None
        while True:
            job: Any = batch.read_namespaced_job_status(name, namespace)
            follower.poll()
            succeeded, failed = (job.status.succeeded or 0, job.status.failed or 0) if job.status else (0, 0)
            if succeeded >= plan.program.nodes or failed > 0:
                break
            reason = _stop_reason(follower, time.monotonic() - started, timeout_s, options)
            reason = reason or (watchdog() if watchdog is not None else None)
            if reason:
                break
            time.sleep(options.poll_interval_s)
        follower.poll()
        return follower.outcome(plan, reason, time.monotonic() - started)
    except Interrupted as exc:
        if created:  # the finally below deletes the Job, and with it every pod
            exc.stopped_ranks += plan.program.nranks
        raise
    finally:
        if not options.keep:
            _delete(core, batch, namespace, created)


def _stop_reason(
    follower: _PodFollower, elapsed: float, timeout_s: float | None, options: KubernetesOptions
) -> str | None:
    """Why the Job must be deleted now, or None. ``--timeout`` bounds the whole job; without it, pods
    that have not started after ``start_timeout_s`` (unschedulable, image never pulled) end it."""
    if timeout_s is not None:
        return f"timed out after {timeout_s:g}s" if elapsed > timeout_s else None
    if elapsed > options.start_timeout_s and not follower.any_started():
        return f"no pod started within {options.start_timeout_s:g}s; pass --timeout SECONDS to wait longer"
    return None


def _create(core: Any, batch: Any, manifest: dict[str, Any], namespace: str) -> None:
    from kubernetes.client.exceptions import ApiException

    kind = manifest["kind"]
    creators = {"Secret": core.create_namespaced_secret, "Service": core.create_namespaced_service,
                "Job": batch.create_namespaced_job}  # fmt: skip
    try:
        creators[kind](namespace, manifest)
    except ValueError as exc:  # the typed client checks bodies (pydantic) before sending them
        first = str(exc).splitlines()[1:2] or [str(exc)]
        raise LaunchError(
            f"the {kind} does not fit the Kubernetes client's model: {first[0].strip()}"
        ) from exc
    except ApiException as exc:
        reason = _api_reason(exc)
        raise LaunchError(
            f"Kubernetes refused the {kind} {namespace}/{manifest['metadata']['name']} "
            f"({exc.status}: {reason}); "
            + ("delete the old one (kubectl delete job,svc,secret -l "
               f"{JOB_NAME_LABEL}={manifest['metadata']['name']}) or pick another --job-name"
               if exc.status == 409 else "check the namespace and your RBAC permissions")
        ) from exc  # fmt: skip


def _delete(core: Any, batch: Any, namespace: str, created: list[tuple[str, str]]) -> None:
    from kubernetes.client.exceptions import ApiException

    deleters = {"Secret": core.delete_namespaced_secret, "Service": core.delete_namespaced_service,
                "Job": batch.delete_namespaced_job}  # fmt: skip
    for kind, object_name in reversed(created):
        try:
            # Background propagation removes the Job's pods too (the default would orphan them).
            deleters[kind](object_name, namespace, propagation_policy="Background")
        except ApiException as exc:
            if exc.status != 404:
                raise LaunchError(
                    f"could not delete {kind} {namespace}/{object_name}: {_api_reason(exc)}"
                ) from exc


def _api_reason(exc: Any) -> str:
    import json

    try:
        return str(json.loads(exc.body).get("message") or exc.reason)
    except (TypeError, ValueError, AttributeError):
        return str(exc.reason)


class _PodFollower:
    """Reads the Job's pods: their logs (new lines only), their state and exit codes."""

    def __init__(self, core: Any, namespace: str, job: str, on_output: OutputSink | None) -> None:
        self.core = core
        self.namespace = namespace
        self.job = job
        self.on_output = on_output
        self.emitted: dict[str, int] = {}
        self.tails: dict[int, list[str]] = {}
        self.pods: dict[int, Any] = {}

    def poll(self) -> None:
        pods = self.core.list_namespaced_pod(self.namespace, label_selector=f"{JOB_NAME_LABEL}={self.job}")
        for pod in pods.items:
            index = int((pod.metadata.labels or {}).get(INDEX_LABEL, -1))
            self.pods[index] = pod
            if pod.status.phase in ("Running", "Succeeded", "Failed"):
                self._logs(index, pod.metadata.name)

    def any_started(self) -> bool:
        return any(p.status is not None and p.status.phase != "Pending" for p in self.pods.values())

    def _logs(self, index: int, pod_name: str) -> None:
        from kubernetes.client.exceptions import ApiException

        try:
            text = self.core.read_namespaced_pod_log(pod_name, self.namespace, container=MAIN_CONTAINER)
        except ApiException:
            return  # the container has not started yet; the next poll reads it
        lines = str(text or "").splitlines()
        for line in lines[self.emitted.get(pod_name, 0) :]:
            self.tails.setdefault(index, []).append(line)
            if self.on_output is not None:
                self.on_output(f"(node {index})", line)
        self.emitted[pod_name] = len(lines)

    def outcome(self, plan: LaunchPlan, stopped_because: str | None, wall_s: float) -> LaunchOutcome:
        exits = []
        for index in range(plan.program.nodes):
            pod = self.pods.get(index)
            code = _exit_code(pod)
            host = pod.spec.node_name if pod is not None and pod.spec is not None else None
            exits.append(RankExit(rank=index, host=host, returncode=code,
                                  last_lines=self.tails.get(index, [])[-LAST_LINES:]))  # fmt: skip
        failure = None
        timed_out = stopped_because is not None
        if timed_out:
            waiting = [f"node {i}: {_pending_reason(self.pods.get(i))}" for i in range(plan.program.nodes)
                       if _exit_code(self.pods.get(i)) is None]  # fmt: skip
            pending = f" ({'; '.join(waiting)})" if waiting else ""
            failure = f"{stopped_because}{pending}; the Job and its pods were deleted"
        else:
            bad = [e for e in exits if e.returncode not in (0, None)]
            if bad:
                first = bad[0]
                last = last_output_clause(first.last_lines)
                failure = f"rank {first.rank} on {first.host} {describe_returncode(first.returncode)}{last}"
        return LaunchOutcome(
            ok=failure is None, exits=exits, failure=failure, timed_out=timed_out, wall_s=wall_s
        )


def _exit_code(pod: Any) -> int | None:
    if pod is None or pod.status is None:
        return None
    for status in pod.status.container_statuses or []:
        if status.name == MAIN_CONTAINER and status.state is not None and status.state.terminated is not None:
            return int(status.state.terminated.exit_code)
    return None


def _pending_reason(pod: Any) -> str:
    if pod is None:
        return "no pod created"
    for condition in pod.status.conditions or []:
        if condition.type == "PodScheduled" and condition.status != "True":
            return f"not scheduled ({condition.reason}: {condition.message})"
    for status in pod.status.container_statuses or []:
        if status.state is not None and status.state.waiting is not None:
            return f"{status.state.waiting.reason}: {status.state.waiting.message or ''}".strip(": ")
    return str(pod.status.phase)
