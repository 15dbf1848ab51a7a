"""A recording stand-in for the Kubernetes API server behind ``kubernetes.client.ApiClient``'s REST seam.

It answers the requests the launcher makes (create Secret/Service/Job, read Job status, list pods, read
pod logs, delete) with the JSON a real API server returns, and plays the kubelet for Indexed Jobs: each
pod's container command really runs here as a local process, with the pod's environment resolved the
way Kubernetes resolves it (``JOB_COMPLETION_INDEX``, the completion-index annotation through the
downward API, ``secretKeyRef``), so its logs and exit code are real. Every request is recorded.
"""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlparse

from kubernetes import client
from kubernetes.client import rest

_PATH = re.compile(
    r"^/(?:api/v1|apis/batch/v1)/namespaces/(?P<ns>[^/]+)/(?P<kind>secrets|services|jobs|pods)"
    r"(?:/(?P<name>[^/]+))?(?:/(?P<sub>status|log))?$"
)


@dataclass
class _Response:
    status: int
    reason: str
    data: bytes
    headers: dict[str, str] = field(default_factory=lambda: {"content-type": "application/json"})


@dataclass
class RecordedRequest:
    method: str
    path: str
    query: dict[str, list[str]]
    body: Any


class ApiServerRecorder:
    """Drop-in for ``ApiClient.rest_client``: ``request(...)`` -> ``RESTResponse``."""

    def __init__(self, *, start_pods: bool = True, node_name: str = "node-a") -> None:
        self.requests: list[RecordedRequest] = []
        self.objects: dict[tuple[str, str, str], dict[str, Any]] = {}
        self.pods: dict[str, dict[str, Any]] = {}
        self.logs: dict[str, str] = {}
        self.start_pods = start_pods
        self.node_name = node_name

    def api_client(self) -> client.ApiClient:
        configuration = client.Configuration()
        configuration.host = "https://k8s.test"
        api = client.ApiClient(configuration)
        api.rest_client = self
        return api

    # --- the seam ------------------------------------------------------------------------------

    def request(
        self,
        method: str,
        url: str,
        headers: Any = None,
        body: Any = None,
        post_params: Any = None,
        _request_timeout: Any = None,
    ) -> rest.RESTResponse:
        parsed = urlparse(url)
        self.requests.append(RecordedRequest(method, parsed.path, parse_qs(parsed.query), body))
        match = _PATH.match(parsed.path)
        if match is None:
            return self._answer(
                404,
                {
                    "kind": "Status",
                    "status": "Failure",
                    "reason": "NotFound",
                    "message": f"the server could not find the requested resource {parsed.path}",
                },
            )
        ns, kind, name, sub = match.group("ns", "kind", "name", "sub")
        if method == "POST":
            return self._create(ns, kind, body)
        if method == "DELETE":
            return self._delete(ns, kind, name or "")
        if kind == "pods" and sub == "log":
            return _raw(self.logs.get(name or "", ""))
        if kind == "pods":
            return self._answer(
                200,
                {
                    "kind": "PodList",
                    "apiVersion": "v1",
                    "metadata": {"resourceVersion": "7"},
                    "items": list(self.pods.values()),
                },
            )
        stored = self.objects.get((kind, ns, name or ""))
        if stored is None:
            return self._not_found(kind, name or "")
        return self._answer(200, stored)

    # --- behaviour -----------------------------------------------------------------------------

    def _create(self, ns: str, kind: str, body: dict[str, Any]) -> rest.RESTResponse:
        name = body["metadata"]["name"]
        if (kind, ns, name) in self.objects:
            return self._answer(
                409,
                {
                    "kind": "Status",
                    "status": "Failure",
                    "reason": "AlreadyExists",
                    "message": f'{kind} "{name}" already exists',
                    "code": 409,
                },
            )
        stored = json.loads(json.dumps(body))
        stored["metadata"].update(
            {
                "uid": f"uid-{len(self.objects)}",
                "resourceVersion": "1",
                "creationTimestamp": "2025-01-01T00:00:00Z",
            }
        )
        if kind == "jobs":
            stored["status"] = {"active": stored["spec"]["parallelism"], "ready": 0}
            if self.start_pods:
                self._run_pods(ns, stored)
        self.objects[(kind, ns, name)] = stored
        return self._answer(201, stored)

    def _delete(self, ns: str, kind: str, name: str) -> rest.RESTResponse:
        stored = self.objects.pop((kind, ns, name), None)
        if stored is None:
            return self._not_found(kind, name)
        if kind == "jobs":
            self.pods = {
                k: v for k, v in self.pods.items() if v["metadata"]["labels"].get("job-name") != name
            }
        if kind == "services":  # the API server answers a Service delete with the deleted Service
            return self._answer(200, stored)
        return self._answer(
            200,
            {
                "kind": "Status",
                "apiVersion": "v1",
                "status": "Success",
                "details": {"name": name, "kind": kind},
            },
        )

    def _run_pods(self, ns: str, job: dict[str, Any]) -> None:
        """Play the kubelet: run each indexed pod's main container here, to completion."""
        name = job["metadata"]["name"]
        template = job["spec"]["template"]
        succeeded = failed = 0
        for index in range(job["spec"]["completions"]):
            pod_name = f"{name}-{index}-abcde"
            container = template["spec"]["containers"][0]
            env = {"PATH": "/usr/bin:/bin", "HOSTNAME": f"{name}-{index}", "JOB_COMPLETION_INDEX": str(index)}
            for item in container.get("env", []):
                env[item["name"]] = self._resolve(ns, item, index)
            proc = subprocess.run(
                container["command"], env=env, capture_output=True, text=True, timeout=60, check=False
            )
            self.logs[pod_name] = proc.stdout + proc.stderr
            code = proc.returncode
            succeeded += code == 0
            failed += code != 0
            labels = {
                **template["metadata"].get("labels", {}),
                "job-name": name,
                "batch.kubernetes.io/job-completion-index": str(index),
            }
            self.pods[pod_name] = {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": pod_name,
                    "namespace": ns,
                    "labels": labels,
                    "annotations": {"batch.kubernetes.io/job-completion-index": str(index)},
                },
                "spec": {
                    "nodeName": self.node_name,
                    "hostname": f"{name}-{index}",
                    "subdomain": template["spec"].get("subdomain"),
                    "containers": [container],
                },
                "status": {
                    "phase": "Succeeded" if code == 0 else "Failed",
                    "containerStatuses": [
                        {
                            "name": container["name"],
                            "ready": False,
                            "restartCount": 0,
                            "image": container["image"],
                            "imageID": "",
                            "containerID": f"containerd://{index}",
                            "state": {
                                "terminated": {
                                    "exitCode": code,
                                    "reason": "Completed" if code == 0 else "Error",
                                    "startedAt": "2025-01-01T00:00:01Z",
                                    "finishedAt": "2025-01-01T00:00:02Z",
                                }
                            },
                        }
                    ],
                },
            }
        job["status"] = {"succeeded": succeeded, "failed": failed, "active": 0}

    def _resolve(self, ns: str, item: dict[str, Any], index: int) -> str:
        if "value" in item:
            return str(item["value"])
        source = item["valueFrom"]
        if "fieldRef" in source:
            path = source["fieldRef"]["fieldPath"]
            assert "job-completion-index" in path, path
            return str(index)
        ref = source["secretKeyRef"]
        secret = self.objects[("secrets", ns, ref["name"])]
        return str(secret["stringData"][ref["key"]])

    def _not_found(self, kind: str, name: str) -> rest.RESTResponse:
        return self._answer(
            404,
            {
                "kind": "Status",
                "status": "Failure",
                "reason": "NotFound",
                "message": f'{kind} "{name}" not found',
                "code": 404,
            },
        )

    @staticmethod
    def _answer(status: int, payload: dict[str, Any]) -> rest.RESTResponse:
        reasons = {200: "OK", 201: "Created", 404: "Not Found", 409: "Conflict"}
        response = rest.RESTResponse(_Response(status, reasons.get(status, ""), json.dumps(payload).encode()))
        response.read()
        return response


def _raw(text: str) -> rest.RESTResponse:
    response = rest.RESTResponse(_Response(200, "OK", text.encode(), {"content-type": "text/plain"}))
    response.read()
    return response
