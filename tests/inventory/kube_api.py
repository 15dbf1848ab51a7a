"""A local HTTP endpoint that answers ``GET /api/v1/nodes`` with recorded NodeList responses.

The official Kubernetes client runs unchanged against it: ``load_kube_config`` reads a real kube config
file whose server is ``http://127.0.0.1:<port>``, ``CoreV1Api.list_node`` sends a real request through
urllib3, and the JSON comes back through the client's own deserializer into ``V1Node`` objects. The
endpoint applies the two list parameters we send - equality label selectors and ``limit``/``continue``
paging - as the API server documents them, and can answer with a recorded error ``Status`` instead.
Every request is kept (path, query, headers) so tests can check what the client asked for.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import yaml

TOKEN = "gpufabric-test-token"


def status_body(code: int, reason: str, message: str) -> dict[str, Any]:
    """A Kubernetes ``Status`` object as the API server sends it with an error."""
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "details": {"kind": "nodes"},
        "code": code,
    }


def parse_selector(selector: str) -> list[tuple[str, str, str]] | None:
    """Equality-based selector terms (k=v, k==v, k!=v, k, !k) as (op, key, value); None if unparsable."""
    terms = []
    for term in (t.strip() for t in selector.split(",") if t.strip()):
        if " " in term or "(" in term:
            return None  # set-based syntax: the endpoint rejects it as 400, as a strict server would
        if "!=" in term:
            key, value = term.split("!=", 1)
            terms.append(("!=", key, value))
        elif "=" in term:
            key, value = term.replace("==", "=").split("=", 1)
            terms.append(("=", key, value))
        elif term.startswith("!"):
            terms.append(("!", term[1:], ""))
        else:
            terms.append(("exists", term, ""))
    return terms if all(key for _, key, _ in terms) else None


def _matches(labels: dict[str, str], terms: list[tuple[str, str, str]]) -> bool:
    checks = {
        "=": lambda key, value: labels.get(key) == value,
        "!=": lambda key, value: labels.get(key) != value,
        "!": lambda key, _: key not in labels,
        "exists": lambda key, _: key in labels,
    }
    return all(checks[op](key, value) for op, key, value in terms)


@dataclass
class RecordedNodesApi:
    """State shared with the handler: what to answer and what was asked."""

    node_list: dict[str, Any] = field(
        default_factory=lambda: {"kind": "NodeList", "apiVersion": "v1", "metadata": {}, "items": []}
    )
    error: tuple[int, dict[str, Any]] | None = None
    requests: list[dict[str, Any]] = field(default_factory=list)
    url: str = ""

    def serve_file(self, path: Path) -> None:
        self.node_list = json.loads(path.read_text())
        self.error = None

    def fail_with(self, code: int, reason: str, message: str) -> None:
        self.error = (code, status_body(code, reason, message))

    def answer(self, path: str, query: dict[str, list[str]]) -> tuple[int, dict[str, Any]]:
        if path != "/api/v1/nodes":
            return 404, status_body(
                404, "NotFound", f"the server could not find the requested resource ({path})"
            )
        if self.error is not None:
            return self.error
        items = self.node_list["items"]
        selector = query.get("labelSelector", [""])[0]
        if selector:
            terms = parse_selector(selector)
            if terms is None:
                return 400, status_body(400, "BadRequest", f"unable to parse requirement: {selector!r}")
            items = [item for item in items if _matches(item["metadata"].get("labels", {}), terms)]
        start = int(query.get("continue", ["0"])[0] or 0)
        limit = int(query.get("limit", ["0"])[0] or 0) or len(items)
        page = items[start : start + limit]
        metadata: dict[str, Any] = dict(self.node_list.get("metadata", {}))
        if start + limit < len(items):
            metadata["continue"] = str(start + limit)
        return 200, {**self.node_list, "metadata": metadata, "items": page}

    def kubeconfig(self, path: Path, *, current: str = "test-cluster") -> Path:
        """A kube config with two contexts on this endpoint, token auth, ``current`` as current context."""
        doc = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "fake", "cluster": {"server": self.url}}],
            "users": [{"name": "tester", "user": {"token": TOKEN}}],
            "contexts": [
                {"name": "test-cluster", "context": {"cluster": "fake", "user": "tester"}},
                {"name": "staging-cluster", "context": {"cluster": "fake", "user": "tester"}},
            ],
            "current-context": current,
            "preferences": {},
        }
        path.write_text(yaml.safe_dump(doc))
        return path


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_GET(self) -> None:
        parsed = urlparse(self.path)
        query = parse_qs(parsed.query)
        state = self.server.state
        state.requests.append(
            {"path": parsed.path, "query": query, "headers": {k.lower(): v for k, v in self.headers.items()}}
        )
        code, body = state.answer(parsed.path, query)
        payload = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        del format, args  # keep the test output clean


class _Server(ThreadingHTTPServer):
    state: RecordedNodesApi


@contextmanager
def running_api_server() -> Iterator[RecordedNodesApi]:
    server = _Server(("127.0.0.1", 0), _Handler)
    server.state = RecordedNodesApi(url=f"http://127.0.0.1:{server.server_address[1]}")
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server.state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
