"""List a cluster's nodes through the official Kubernetes client, with one-line errors that say the fix.

Config (read and checked in ``kube_config.py``): ``--kubeconfig``, else ``$KUBECONFIG`` (a
``:``-separated list works, as with kubectl), else ``~/.kube/config``; with none of them and
``$KUBERNETES_SERVICE_HOST`` set, the in-cluster service account. Listing pages through
``CoreV1Api.list_node`` (``limit`` + ``continue``).

Exit codes (decided here, documented in ``gpufabric nodes --help``): problems the user fixes on their
side - no or bad kube config, unknown context, rejected credentials (401), no permission to list
nodes (403), a selector the server rejects (400) - are ``UsageError`` (exit 2); a server that cannot
be reached or fails (5xx, timeouts) is a ``GpufabricError`` (exit 1).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

# The kubernetes client (and urllib3, which it brings) is the optional `kubernetes` extra: imported only
# when a cluster is asked for, so `pip install gpufabric` runs every other command without it.
if TYPE_CHECKING:
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

from gpufabric._optional import require
from gpufabric.errors import GpufabricError, UsageError
from gpufabric.inventory.kube_config import (
    GET_CREDENTIALS,
    check_exec_plugin,
    choose_context,
    client_errors,
    config_paths,
    existing_files,
    read_config,
)

PAGE_SIZE = 500


def _kubernetes() -> tuple[Any, Any, Any, type[Exception]]:
    """The kubernetes client modules, or one clear line when the optional extra is not installed."""
    require("kubernetes", extra="kubernetes", for_what="listing Kubernetes nodes")
    from kubernetes import client, config
    from kubernetes.config import incluster_config
    from kubernetes.config.config_exception import ConfigException

    return client, config, incluster_config, ConfigException


def connect(
    *, context: str | None = None, kubeconfig: str | None = None, environ: Mapping[str, str] | None = None
) -> tuple[client.ApiClient, str | None]:
    """An ``ApiClient`` for the chosen context, and that context's name (None in-cluster)."""
    client, config, incluster_config, ConfigException = _kubernetes()
    env = os.environ if environ is None else environ
    paths = config_paths(kubeconfig, env)
    files = existing_files(paths)
    if not files:
        explicit = kubeconfig is not None or bool(env.get("KUBECONFIG"))
        if context is None and not explicit and env.get("KUBERNETES_SERVICE_HOST"):
            configuration = client.Configuration()
            loader = incluster_config.InClusterConfigLoader(
                token_filename=incluster_config.SERVICE_TOKEN_FILENAME,
                cert_filename=incluster_config.SERVICE_CERT_FILENAME,
                environ=env,
            )
            try:
                loader.load_and_set(configuration)
            except ConfigException as exc:
                raise UsageError(
                    f"in-cluster Kubernetes config: {exc}; run with a kube config instead"
                ) from exc
            return client.ApiClient(configuration), None
        flag = "--kubeconfig" if kubeconfig else ("$KUBECONFIG" if env.get("KUBECONFIG") else "default")
        raise UsageError(
            f"no kube config at {paths} ({flag}): point --kubeconfig or KUBECONFIG at your cluster's config "
            f"(create one with {GET_CREDENTIALS})"
        )
    where = os.pathsep.join(str(f) for f in files)
    kube = read_config(files)
    chosen = choose_context(kube, context, where)
    check_exec_plugin(kube, chosen, where, env)
    configuration = client.Configuration()
    try:
        with client_errors() as logged:
            config.load_kube_config(
                config_file=where, context=chosen, client_configuration=configuration, persist_config=False
            )
    except ConfigException as exc:
        raise UsageError(
            f"kube config {where}, context {chosen!r}: {' '.join(str(exc).split())}; fix the entry or "
            f"recreate it with {GET_CREDENTIALS}"
        ) from exc
    if logged:
        raise UsageError(
            f"kube config {where}, context {chosen!r}: getting credentials failed: {logged[0]}; fix the "
            f"credential plugin or recreate the entry with {GET_CREDENTIALS}"
        )
    # One connection attempt (no urllib3 retry, which also logs a warning) and bounded time: an
    # unreachable server is reported at once, not retried for minutes.
    configuration.retries = 0
    return client.ApiClient(configuration), chosen


def _status_message(exc: ApiException) -> str:
    """The ``message`` of the Kubernetes Status object in the error body, else the HTTP reason."""
    try:
        body: Any = json.loads(exc.body or "")
    except (TypeError, ValueError):
        body = None
    if isinstance(body, dict) and body.get("message"):
        return str(body["message"])
    return str(exc.reason or "").strip() or "no detail"


def _translate(exc: ApiException, host: str, context: str | None, selector: str | None) -> GpufabricError:
    message = _status_message(exc)
    where = f"{host}" + (f" (context {context})" if context else "")
    if exc.status == 401:
        return UsageError(
            f"{where} rejected the credentials (401 Unauthorized: {message}); refresh them with "
            f"{GET_CREDENTIALS}"
        )
    if exc.status == 403:
        return UsageError(
            f"not allowed to list nodes on {where} (403 Forbidden: {message}); nodes are cluster-scoped: "
            "ask a cluster admin for a ClusterRole with get and list on nodes bound to you "
            "(check with `kubectl auth can-i list nodes`)"
        )
    if exc.status == 400 and selector:
        return UsageError(
            f"--selector {selector!r}: the API server rejected it ({message}); "
            "use LABEL=VALUE[,LABEL=VALUE], e.g. node.kubernetes.io/instance-type=p4d.24xlarge"
        )
    return GpufabricError(
        f"listing nodes on {where} failed: HTTP {exc.status} {message}; retry, or check the control "
        "plane's health"
    )


def list_nodes(
    api: client.ApiClient,
    *,
    selector: str | None = None,
    context: str | None = None,
    page_size: int = PAGE_SIZE,
    timeout_s: float = 30.0,
) -> list[Any]:
    """Every ``V1Node`` matching ``selector``, following ``continue`` tokens page by page."""
    import urllib3
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

    core = client.CoreV1Api(api)
    host = api.configuration.host
    nodes: list[Any] = []
    token: str | None = None
    while True:
        try:
            page = core.list_node(
                label_selector=selector or None,
                limit=page_size,
                _continue=token,
                _request_timeout=timeout_s,
            )
        except ApiException as exc:
            if exc.status == 0:
                raise GpufabricError(
                    f"cannot reach the Kubernetes API server at {host}: {' '.join(str(exc.reason).split())}"
                ) from exc
            raise _translate(exc, host, context, selector) from exc
        except urllib3.exceptions.HTTPError as exc:
            raise GpufabricError(
                f"cannot reach the Kubernetes API server at {host}"
                + (f" (context {context})" if context else "")
                + f": {type(exc).__name__}; check that the context names a running cluster you can reach "
                "(VPN, endpoint access, `kubectl cluster-info`)"
            ) from exc
        nodes.extend(page.items or [])
        token = page.metadata._continue if page.metadata else None
        if not token:
            return nodes
