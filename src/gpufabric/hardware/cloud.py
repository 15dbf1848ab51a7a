"""The cloud's name for this machine, from its instance metadata service, when one answers.

Never required and never slow: the three services are asked at once, each with a short timeout
(``TIMEOUT_S``), and a machine outside any cloud costs one timeout. Proxies from the environment are not
used (the services are link-local). Each provider's documented request:

* AWS (IMDSv2, the EC2 user guide "Use IMDSv2"): ``PUT /latest/api/token`` with
  ``X-aws-ec2-metadata-token-ttl-seconds``, then ``GET /latest/meta-data/instance-type`` with the token in
  ``X-aws-ec2-metadata-token``.
* GCP (Compute Engine "About VM metadata"): ``GET http://metadata.google.internal/computeMetadata/v1/
  instance/machine-type`` with ``Metadata-Flavor: Google``; the answer is
  ``projects/<n>/machineTypes/<type>``.
* Azure (Instance Metadata Service): ``GET /metadata/instance/compute/vmSize?api-version=2021-02-01&
  format=text`` with ``Metadata: true``.

``GPUFABRIC_NO_METADATA=1`` (or ``--no-metadata``) skips all three. A benchmark's ranks ask only when the
user exports ``GPUFABRIC_CLOUD_METADATA=1`` to them (``CLOUD_METADATA_ENV``; ``bench.node_facts`` says why).
"""

from __future__ import annotations

import threading
import time
import urllib.error
import urllib.request
from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict

from gpufabric.boundary_names import CLOUD_METADATA_ENV, NO_METADATA_ENV

TIMEOUT_S = 0.3
"""Opt-in for a benchmark's ranks, which otherwise leave the metadata services alone."""


class MetadataEndpoints(BaseModel):
    """Where each provider's metadata service is (tests point all three at a server on 127.0.0.1)."""

    model_config = ConfigDict(frozen=True)

    aws: str = "http://169.254.169.254"
    gcp: str = "http://metadata.google.internal"
    azure: str = "http://169.254.169.254"


class CloudIdentity(BaseModel):
    """Which cloud answered, and the instance type it named."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    cloud: str | None = None
    instance_type: str | None = None
    notes: tuple[str, ...] = ()


NOT_ASKED = (
    f"cloud metadata: not asked (--no-metadata or {NO_METADATA_ENV}=1; a benchmark's ranks ask only with "
    f"{CLOUD_METADATA_ENV}=1)"
)

_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _call(url: str, headers: Mapping[str, str], timeout: float, method: str = "GET") -> str | None:
    request = urllib.request.Request(url, headers=dict(headers), method=method)
    try:
        with _OPENER.open(request, timeout=timeout) as response:
            body: bytes = response.read(4096)
            return body.decode("utf-8", errors="replace").strip() or None
    except (urllib.error.URLError, OSError, ValueError):
        return None


def _aws(base: str, timeout: float) -> str | None:
    token = _call(
        f"{base}/latest/api/token", {"X-aws-ec2-metadata-token-ttl-seconds": "60"}, timeout, method="PUT"
    )
    if token is None:
        return None
    return _call(f"{base}/latest/meta-data/instance-type", {"X-aws-ec2-metadata-token": token}, timeout)


def _gcp(base: str, timeout: float) -> str | None:
    answer = _call(f"{base}/computeMetadata/v1/instance/machine-type", {"Metadata-Flavor": "Google"}, timeout)
    return answer.rsplit("/", 1)[-1] if answer else None


def _azure(base: str, timeout: float) -> str | None:
    return _call(
        f"{base}/metadata/instance/compute/vmSize?api-version=2021-02-01&format=text",
        {"Metadata": "true"},
        timeout,
    )


def _plausible(name: str | None) -> bool:
    """An instance type is one short token (a web server answering with a page is not a cloud)."""
    return bool(name) and len(name or "") <= 64 and not any(c.isspace() or c in "<>" for c in name or "")


def cloud_identity(
    *,
    environ: Mapping[str, str],
    endpoints: MetadataEndpoints | None = None,
    timeout_s: float = TIMEOUT_S,
    enabled: bool = True,
) -> CloudIdentity:
    """The first provider that names an instance type, asked in parallel; an empty identity otherwise."""
    if not enabled or environ.get(NO_METADATA_ENV, "") not in ("", "0"):
        return CloudIdentity(notes=(NOT_ASKED,))
    where = endpoints or MetadataEndpoints()
    askers = {"aws": (_aws, where.aws), "gcp": (_gcp, where.gcp), "azure": (_azure, where.azure)}
    answers: dict[str, str | None] = {}

    def ask(cloud: str) -> None:
        function, base = askers[cloud]
        answers[cloud] = function(base, timeout_s)

    # Daemon threads, joined against one deadline: a name lookup of metadata.google.internal outside GCP
    # is not bound by the socket timeout, and must hold up neither the answer nor the interpreter's exit.
    threads = [threading.Thread(target=ask, args=(cloud,), daemon=True) for cloud in askers]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 2 * timeout_s + 0.2  # AWS asks twice: a token, then the type
    for thread in threads:
        thread.join(max(deadline - time.monotonic(), 0.0))
    for cloud in ("aws", "gcp", "azure"):
        name = answers.get(cloud)
        if _plausible(name):
            return CloudIdentity(cloud=cloud, instance_type=name)
    return CloudIdentity(
        notes=(f"cloud metadata: no AWS, GCP or Azure metadata service answered within {timeout_s:g} s",)
    )
