"""Secrets never leave the process: environment captured into any output is redacted here.

A variable whose *name* contains KEY, TOKEN, SECRET, PASSWORD or CREDENTIAL (any case) keeps its name
and loses its value. Every writer of environment (results, reports, dry-run plans, logs) goes through
``redact_env``; documents that embed environment (Kubernetes manifests, pod_config) go through
``redact_manifest``; recorded command lines (``--env NAME=VALUE``) go through ``redact_argv``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

REDACTED = "<redacted>"
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL", re.IGNORECASE)
_ASSIGNMENT = re.compile(r"^(?P<lead>['\"]?(?:--?[A-Za-z][\w-]*=)?)(?P<name>[A-Za-z_][A-Za-z0-9_]*)=")


def is_secret_name(name: str) -> bool:
    return bool(_SECRET_NAME.search(name))


def redact_env(env: Mapping[str, str]) -> dict[str, str]:
    """A copy of ``env`` with the values of secret-looking names replaced."""
    return {name: (REDACTED if is_secret_name(name) else value) for name, value in env.items()}


def redact_text(text: str, env: Mapping[str, str]) -> str:
    """Replace any secret value from ``env`` that appears verbatim in ``text`` (e.g. in a log line)."""
    for name, value in env.items():
        if is_secret_name(name) and len(value) >= 4:
            text = text.replace(value, REDACTED)
    return text


def redact_manifest(document: Any) -> Any:
    """A copy of a JSON-like tree where environment inside it is redacted: Kubernetes env entries
    (``{"name": ..., "value": ...}``) and ``env``/``envs`` string maps with secret-looking names."""
    if isinstance(document, list):
        return [redact_manifest(item) for item in document]
    if not isinstance(document, dict):
        return document
    copy = {key: redact_manifest(value) for key, value in document.items()}
    name = copy.get("name")
    if isinstance(name, str) and "value" in copy and is_secret_name(name):
        copy["value"] = REDACTED
    for key in ("env", "envs", "environment"):
        value = copy.get(key)
        if isinstance(value, dict) and all(isinstance(k, str) for k in value):
            copy[key] = {k: (REDACTED if is_secret_name(k) else v) for k, v in value.items()}
    return copy


def redact_argv(argv: Sequence[str]) -> list[str]:
    """A command line safe to record: ``NAME=VALUE`` (also ``--env=NAME=VALUE``) with a secret-looking
    NAME keeps ``NAME=``; the argument after a secret-looking flag (``--api-key X``) is replaced."""
    out: list[str] = []
    hide_next = False
    for arg in argv:
        if hide_next:
            out.append(REDACTED)
            hide_next = False
            continue
        match = _ASSIGNMENT.match(arg)
        if match and is_secret_name(match.group("name")):
            quote = arg[0] if arg[:1] in ("'", '"') else ""
            out.append(f"{match.group(0)}{REDACTED}{quote}")
            continue
        if arg.startswith("-") and "=" not in arg and is_secret_name(arg.lstrip("-").replace("-", "_")):
            hide_next = True
        out.append(arg)
    return out
