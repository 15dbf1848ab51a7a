"""The Kubernetes launcher, rendering half: an Indexed Job (one pod per node) plus a headless Service that
gives every pod a stable DNS name (``<job>-<index>.<job>``), and a Secret for secret-looking variables.

The pod template is ours (image, command, env, rendezvous port), then the planner's pod patch, then the
user's ``config.kubernetes.pod_config`` on top, merged with ``gpufabric.planner.merge.merge_pod_config``
(the user wins; overrides become plan notes). Node rank is the Job's completion index
(``JOB_COMPLETION_INDEX``; ``RANK`` through the downward API for the engine), node addresses are the pods'
DNS names, ``MASTER_ADDR`` is pod 0. Applying, waiting, logs and clean-up live in ``kubernetes_run``.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any, ClassVar

from gpufabric.errors import UsageError
from gpufabric.launch.base import LaunchOutcome, LaunchPlan, OutputSink, PlannedCommand, RankProgram
from gpufabric.launch.identity import dns_label, layout_env
from gpufabric.launch.kubernetes_options import JOB_NAME_LABEL, MAIN_CONTAINER, KubernetesOptions
from gpufabric.launch.names import LAUNCHER_KINDS, LauncherKind
from gpufabric.launch.task_program import is_task_program, program_layout
from gpufabric.planner.merge import merge_pod_config
from gpufabric.redact import is_secret

if TYPE_CHECKING:  # types only: settings imports every launcher's options, never a launcher
    from gpufabric.launch.settings import LauncherSettings
    from gpufabric.task.model import Task

COMPLETION_INDEX_FIELD = "metadata.annotations['batch.kubernetes.io/job-completion-index']"
# kubernetes_validate ships the schemas of these versions; manifests are checked against the newest.
SCHEMA_VERSION = "1.37.0"


class KubernetesLauncher:
    name = "kubernetes"
    kind: ClassVar[LauncherKind] = LAUNCHER_KINDS["kubernetes"]

    @classmethod
    def from_settings(cls, settings: LauncherSettings, *, task: Task | None = None) -> KubernetesLauncher:
        """A task file's own image and pod config fill what the flags left empty."""
        options = settings.kubernetes
        if task is not None:
            options = options.model_copy(
                update={"image": options.image or task.resources.docker_image,
                        "pod_config": options.pod_config or task.pod_config}
            )  # fmt: skip
        return cls(options)

    def __init__(self, options: KubernetesOptions | None = None, *, api_client: Any = None) -> None:
        self.options = options or KubernetesOptions()
        self.api_client = api_client  # the transport seam: a kubernetes.client.ApiClient

    def render(self, program: RankProgram) -> LaunchPlan:
        opts = self.options
        if program.ranks_per_node != 1:
            raise UsageError(
                f"kubernetes runs one process per pod, but the job has {program.ranks_per_node} ranks per "
                "node; use a task whose run starts one process per GPU (torchrun, mpirun)"
            )
        name = dns_label(opts.job_name or program.label, max_length=40)
        addresses = [f"{name}-{i}.{name}" for i in range(program.nodes)]
        layout = program_layout(program, addresses, launcher=self.name, master_port=opts.master_port)
        env = {**program.env, **layout_env(layout)}
        if not opts.image:
            raise UsageError(
                "kubernetes needs a container image: set resources.image_id: docker:IMAGE in the task "
                "or pass --image IMAGE"
            )
        secrets = {k: v for k, v in env.items() if is_secret(k, v)}
        pod, conflicts = pod_template(program, opts, name, env, sorted(secrets))
        manifests: list[dict[str, Any]] = []
        if secrets:
            manifests.append(_secret(name, opts.namespace, secrets))
        manifests += [
            _service(name, opts.namespace, opts.master_port),
            _job(name, opts.namespace, program, pod),
        ]
        notes = [
            f"Indexed Job {opts.namespace}/{name}: {program.nodes} pod(s), one per node; "
            f"node addresses {', '.join(addresses)}",
            *(f"pod_config override: {c}" for c in conflicts),
        ]
        if is_task_program(program):
            notes.append(
                "task: each pod runs setup then run with SKYPILOT_* set (node rank = completion index)"
            )
        # Applied through the Kubernetes API; the argv is the kubectl equivalent a person would run.
        kubectl = ["kubectl", "apply", "--namespace", opts.namespace, "-f", f"{name}.yaml"]
        command = PlannedCommand(argv=kubectl, env=env, ranks=list(range(program.nranks)))
        return LaunchPlan(launcher=self.name, program=program, commands=[command], manifests=manifests,
                          notes=notes)  # fmt: skip

    def execute(
        self, plan: LaunchPlan, *, on_output: OutputSink | None = None, timeout_s: float | None = None
    ) -> LaunchOutcome:
        from gpufabric.launch.kubernetes_run import run_kubernetes_plan

        return run_kubernetes_plan(plan, self.options, api_client=self.api_client, on_output=on_output,
                                   timeout_s=timeout_s)  # fmt: skip


def planned_pod_patch(
    instance_type: str, *, tier: str, nodes: int, gpus_per_node: int, name: str
) -> tuple[dict[str, Any], list[str]]:
    """(the planner's pod patch for ``instance_type`` on Kubernetes, plan notes): fabric resources (EFA,
    RDMA), IPC_LOCK, same-zone affinity, GKE sidecars and the fabric env, to go into ``plan_patch``.
    Unknown shapes and tiers are the planner's one-line ``CatalogError``/``UsageError``."""
    from gpufabric.planner import PlanRequest, Platform, Tier, plan

    tiers = [t.value for t in Tier]
    if tier not in tiers:
        raise UsageError(f"--tier: unknown value {tier!r}; choose from {', '.join(tiers)}")
    request = PlanRequest(
        instance_type=instance_type,
        platform=Platform.KUBERNETES,
        nodes=nodes,
        tier=Tier(tier),
        gpus=gpus_per_node or None,  # None: the whole node, as the planner defaults
        cluster_name=dns_label(name, max_length=40),
    )
    result = plan(request)
    notes = [
        f"planner: {instance_type} tier {result.tier_planned.value}: {result.fabric.value} "
        f"({result.fabric_reason})",
        *(f"planner warning: {w}" for w in result.warnings),
        *(f"prerequisite: {p}" for p in result.prerequisites),
    ]
    return dict(result.documents["kubernetes.pod_config"]), notes


def pod_template(
    program: RankProgram, opts: KubernetesOptions, name: str, env: dict[str, str], secret_names: list[str]
) -> tuple[dict[str, Any], list[str]]:
    """Ours, then the planner's patch, then the user's pod_config; returns (template, user overrides)."""
    env_list: list[dict[str, Any]] = [
        {"name": k, "valueFrom": {"secretKeyRef": {"name": name, "key": k}}} if k in secret_names
        else {"name": k, "value": v}
        for k, v in sorted(env.items())
    ]  # fmt: skip
    env_list += [
        {"name": "RANK", "valueFrom": {"fieldRef": {"fieldPath": COMPLETION_INDEX_FIELD}}},
        {"name": "WORLD_SIZE", "value": str(program.nranks)},
        {"name": "LOCAL_RANK", "value": "0"},
    ]
    main: dict[str, Any] = {
        "name": MAIN_CONTAINER,
        "image": opts.image,
        "command": list(program.argv),
        "env": env_list,
        "ports": [{"name": "rendezvous", "containerPort": opts.master_port}],
    }
    if program.gpus_per_node > 0:
        gpus = {opts.gpu_resource: program.gpus_per_node}
        main["resources"] = {"limits": dict(gpus), "requests": dict(gpus)}
    ours: dict[str, Any] = {
        "metadata": {"labels": {JOB_NAME_LABEL: name}},
        "spec": {"subdomain": name, "restartPolicy": "Never", "containers": [main]},
    }
    with_plan, _ = merge_pod_config(ours, opts.plan_patch)
    merged, conflicts = merge_pod_config(with_plan, opts.pod_config)
    spec = merged.setdefault("spec", {})
    # The Job owns these; a pod_config that changes them would break indexing or DNS.
    spec["subdomain"] = name
    spec["restartPolicy"] = "Never"
    merged.setdefault("metadata", {}).setdefault("labels", {})[JOB_NAME_LABEL] = name
    _quantities_as_text(spec)
    return merged, conflicts


def _quantities_as_text(spec: dict[str, Any]) -> None:
    """``vpc.amazonaws.com/efa: 4`` -> ``"4"``: YAML gives ints, the typed client only takes quantity text."""
    for key in ("containers", "initContainers"):
        for container in spec.get(key) or []:
            resources = container.get("resources") or {}
            for section in ("limits", "requests"):
                if isinstance(resources.get(section), dict):
                    resources[section] = {k: str(v) for k, v in resources[section].items()}


def _service(name: str, namespace: str, port: int) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": namespace, "labels": {JOB_NAME_LABEL: name}},
        "spec": {
            "clusterIP": "None",
            "selector": {JOB_NAME_LABEL: name},
            "publishNotReadyAddresses": True,  # ranks resolve each other before any is "ready"
            "ports": [{"name": "rendezvous", "port": port, "targetPort": port}],
        },
    }


def _job(name: str, namespace: str, program: RankProgram, pod: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": namespace, "labels": {JOB_NAME_LABEL: name}},
        "spec": {
            "completionMode": "Indexed",
            "completions": program.nodes,
            "parallelism": program.nodes,
            "backoffLimit": 0,  # a failed rank fails the job; collectives cannot resume a lost peer
            "ttlSecondsAfterFinished": 3600,
            "template": copy.deepcopy(pod),
        },
    }


def _secret(name: str, namespace: str, values: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": namespace, "labels": {JOB_NAME_LABEL: name}},
        "type": "Opaque",
        "stringData": dict(values),
    }


def validate_manifests(manifests: list[dict[str, Any]], version: str = SCHEMA_VERSION) -> None:
    """Check every object against the official OpenAPI schemas (strict: unknown fields are errors)."""
    import kubernetes_validate

    for manifest in manifests:
        try:
            kubernetes_validate.validate(manifest, version, strict=True)
        except kubernetes_validate.ValidationError as exc:
            where = ".".join(str(p) for p in exc.path) or "(top level)"
            kind = manifest.get("kind", "object")
            raise UsageError(
                f"rendered {kind} is not valid Kubernetes {version}: {where}: {exc.message}"
            ) from exc
