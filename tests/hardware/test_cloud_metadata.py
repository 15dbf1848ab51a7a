"""The instance type from a metadata service: a real HTTP server on 127.0.0.1 answering as each cloud's
documented endpoint does (AWS IMDSv2 token then instance-type; GCP Metadata-Flavor; Azure Metadata: true)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from gpufabric.hardware.cloud import MetadataEndpoints, cloud_identity


class _Cloud(BaseHTTPRequestHandler):
    speaks = "aws"

    def log_message(self, format: str, *args: object) -> None:  # keep test output clean
        return

    def _answer(self, code: int, body: str) -> None:
        data = body.encode()
        self.send_response(code)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_PUT(self) -> None:
        if (
            self.speaks == "aws"
            and self.path == "/latest/api/token"
            and self.headers.get("X-aws-ec2-metadata-token-ttl-seconds")
        ):
            self._answer(200, "TOKEN123")
        else:
            self._answer(404, "")

    def do_GET(self) -> None:
        if self.speaks == "aws" and self.path == "/latest/meta-data/instance-type":
            ok = self.headers.get("X-aws-ec2-metadata-token") == "TOKEN123"
            self._answer(200 if ok else 401, "p5.48xlarge" if ok else "")
        elif self.speaks == "gcp" and self.path == "/computeMetadata/v1/instance/machine-type":
            ok = self.headers.get("Metadata-Flavor") == "Google"
            self._answer(200 if ok else 403, "projects/1234/machineTypes/a3-megagpu-8g" if ok else "")
        elif self.speaks == "azure" and self.path.startswith("/metadata/instance/compute/vmSize"):
            ok = self.headers.get("Metadata") == "true" and "api-version=" in self.path
            self._answer(200 if ok else 400, "Standard_ND96isr_H100_v5" if ok else "")
        else:
            self._answer(404, "<html>not found</html>")


@pytest.fixture
def server() -> Iterator[ThreadingHTTPServer]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Cloud)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def _at(httpd: ThreadingHTTPServer) -> MetadataEndpoints:
    base = f"http://127.0.0.1:{httpd.server_address[1]}"
    return MetadataEndpoints(aws=base, gcp=base, azure=base)


@pytest.mark.parametrize(
    ("cloud", "instance_type"),
    [("aws", "p5.48xlarge"), ("gcp", "a3-megagpu-8g"), ("azure", "Standard_ND96isr_H100_v5")],
)
def test_each_cloud_names_its_instance_type(
    server: ThreadingHTTPServer, monkeypatch: pytest.MonkeyPatch, cloud: str, instance_type: str
) -> None:
    monkeypatch.setattr(_Cloud, "speaks", cloud)
    identity = cloud_identity(environ={}, endpoints=_at(server), timeout_s=2.0)
    assert (identity.cloud, identity.instance_type, identity.notes) == (cloud, instance_type, ())


def test_a_server_that_is_no_cloud_names_nothing(
    server: ThreadingHTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_Cloud, "speaks", "none")
    identity = cloud_identity(environ={}, endpoints=_at(server), timeout_s=2.0)
    assert identity.instance_type is None
    assert identity.notes == ("cloud metadata: no AWS, GCP or Azure metadata service answered within 2 s",)


def test_nothing_listening_costs_one_short_timeout() -> None:
    # a closed port on 127.0.0.1 refuses at once; the answer is "none", never an error
    closed = MetadataEndpoints(aws="http://127.0.0.1:9", gcp="http://127.0.0.1:9", azure="http://127.0.0.1:9")
    assert cloud_identity(environ={}, endpoints=closed).instance_type is None


def test_skipped_by_flag_or_environment(server: ThreadingHTTPServer) -> None:
    for identity in (
        cloud_identity(environ={"GPUFABRIC_NO_METADATA": "1"}, endpoints=_at(server)),
        cloud_identity(environ={}, endpoints=_at(server), enabled=False),
    ):
        assert identity.instance_type is None
        assert identity.notes == (
            "cloud metadata: not asked (--no-metadata or GPUFABRIC_NO_METADATA=1; a benchmark's ranks ask "
            "only with GPUFABRIC_CLOUD_METADATA=1)",
        )
