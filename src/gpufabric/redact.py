"""Secrets never leave the process: anything written or printed goes through this one module.

Two tests, by *name* and by *value*:

- A variable whose name contains KEY, TOKEN, SECRET, PASS (PASSWORD, PASSWD, DB_PASS) or CREDENTIAL
  (any case) keeps its name and loses its value (``redact_env``, ``redact_manifest``, ``redact_argv``).
- Any text, whatever name it came under, loses the secret part of known secret *shapes*
  (``scrub``): the user and password of a URL with credentials (``https://user:pass@db``), the value of a
  connection-string key (``AccountKey=``, ``Password=``, ``SharedAccessSignature=``), and tokens
  with a published prefix: AWS access key ids (AKIA/ASIA...), GitHub (ghp_, gho_, ghu_, ghs_, ghr_,
  github_pat_), Hugging Face (hf_), Weights & Biases (wandb_v1_, local-), Slack (xoxb-, xoxp-, xapp-...),
  JWTs (eyJ...eyJ...sig), ``Bearer`` credentials and PEM private keys.

``scrub_known`` also removes, verbatim, the values of secret-looking names in the process environment,
in every environment a launched program was given (``remember_secrets``: a task file's ``envs:``, ``--env``)
and in any other mapping given, so a secret printed by a rank or quoted in a log line is caught too.
The CLI installs ``ScrubbingStream`` over stdout and stderr (``cli/app.py``), and ``gpufabric.outputs``
scrubs every file it writes: the last line of defence behind the structured redaction above.

Every pattern is anchored on a literal and uses bounded repetition, so scrubbing is linear in the text.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, TextIO, TypeVar

from pydantic import BaseModel

ModelT = TypeVar("ModelT", bound=BaseModel)

REDACTED = "<redacted>"
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASS|CREDENTIAL", re.IGNORECASE)
_ASSIGNMENT = re.compile(r"^(?P<lead>['\"]?(?:--?[A-Za-z][\w-]*=)?)(?P<name>[A-Za-z_][A-Za-z0-9_]*)=")

# Each alternative: a group ``keep`` (what stays, may be empty) before the secret part ``hide``.
_SHAPES = [
    # scheme://user:password@host -> scheme://<redacted>@host. The userinfo ends at the LAST "@" before
    # the host (RFC 3986: "@" cannot end a host, so a password "p@ss" leaves "@" earlier in the text); all
    # of it goes, since a token is often the "user" (GitHub's https://TOKEN:x-oauth-basic@github.com).
    r"(?P<u_keep>\b[A-Za-z][A-Za-z0-9+.-]{0,30}://)(?P<u_hide>[^\s/:'\"]{0,256}:[^\s/'\"]{0,512})(?=@)",
    # Key=value pairs of connection strings (Azure storage/Service Bus, ADO.NET, ODBC, JDBC).
    r"(?P<c_keep>(?<![A-Za-z0-9])(?i:AccountKey|SharedAccessKey|SharedAccessSignature|Password|Pwd"
    r"|ClientSecret|AccessKey|SecretKey|ApiKey|api_key|access_token)[ \t]{0,4}=[ \t]{0,4})"
    r"(?P<c_hide>[^;&\r\n'\"]{1,1024})",  # values may hold spaces; ';' ends one
    # The signature of an Azure shared-access-signature URL (``...&sig=<base64>``).
    r"(?P<s_keep>[?&]sig=)(?P<s_hide>[A-Za-z0-9%+/=]{16,1024})",
    # Authorization: Bearer <token>: the scheme stays, the credential (20+ characters) goes.
    r"(?P<b_keep>\bBearer[ \t]{1,4})(?P<b_hide>[A-Za-z0-9._~+/-]{20,4096}=*)",
    # Tokens recognisable by their published prefixes.
    r"(?P<t_hide>\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b"
    r"|\bgh[pousr]_[A-Za-z0-9]{30,255}\b"
    r"|\bgithub_pat_[A-Za-z0-9_]{22,255}\b"
    r"|\bhf_[A-Za-z0-9]{30,255}\b"
    r"|\bwandb_v1_[A-Za-z0-9_-]{20,255}"
    r"|\blocal-[0-9a-f]{40}\b"
    r"|\bx(?:ox[abposre]|app)-[A-Za-z0-9-]{10,255}"
    r"|\beyJ[A-Za-z0-9_-]{4,4096}\.eyJ[A-Za-z0-9_-]{4,8192}\.[A-Za-z0-9_-]{0,4096}"
    r"|-----BEGIN[A-Z ]{0,20} PRIVATE KEY-----[\s\S]{0,16384}?-----END[A-Z ]{0,20} PRIVATE KEY-----)",
]
_SHAPE = re.compile("|".join(_SHAPES))
# A literal every shape above contains: text with none of them (most log lines) skips the regex, which
# tries every alternative at every position (C substring searches are far cheaper).
_ANCHORS = ("://", "=", "Bearer", "AKIA", "ASIA", "ABIA", "ACCA", "gh", "hf_", "wandb_v1_", "local-", "xox",
            "xapp-", "eyJ", "-----BEGIN")  # fmt: skip
_MIN_KNOWN = 4  # shorter values ("1", "yes") would redact ordinary text
# Secret values this process handed to programs it launched (not in os.environ): scrubbed like those.
_remembered: set[str] = set()


def is_secret_name(name: str) -> bool:
    return bool(_SECRET_NAME.search(name))


def has_secret_value(value: str) -> bool:
    """Whether ``value`` holds a secret shape (a URL password, a connection-string key, a token)."""
    return any(anchor in value for anchor in _ANCHORS) and bool(_SHAPE.search(value))


def is_secret(name: str, value: str) -> bool:
    """A variable to keep out of anything written: a secret-looking name, or a secret-shaped value."""
    return is_secret_name(name) or has_secret_value(value)


def _replace(match: re.Match[str]) -> str:
    groups = match.groupdict()
    keep = next((groups[k] for k in ("u_keep", "c_keep", "s_keep", "b_keep") if groups[k] is not None), "")
    return f"{keep}{REDACTED}"


def scrub(text: str) -> str:
    """``text`` with every secret shape replaced by ``<redacted>`` (linear in the text)."""
    if not text or not any(anchor in text for anchor in _ANCHORS):
        return text
    return _SHAPE.sub(_replace, text)


def remember_secrets(env: Mapping[str, str]) -> None:
    """Scrub the values of ``env``'s secret-looking names from everything printed or written from now on,
    as if they were in the process environment: a task file's ``envs: {HF_TOKEN: ...}`` or ``--env
    API_KEY=...`` reach the ranks without passing through ``os.environ`` here."""
    _remembered.update(v for k, v in env.items() if is_secret_name(k) and len(v) >= _MIN_KNOWN)


def known_secret_values(*envs: Mapping[str, str]) -> list[str]:
    """Values of secret-looking names in the process environment, the remembered ones and ``envs``,
    longest first."""
    values = {
        value
        for env in (os.environ, *envs)
        for name, value in env.items()
        if is_secret_name(name) and len(value) >= _MIN_KNOWN
    }
    return sorted(values | _remembered, key=len, reverse=True)


def scrub_known(text: str, *envs: Mapping[str, str]) -> str:
    """``scrub`` plus the verbatim values of secret-looking names (process environment and ``envs``)."""
    for value in known_secret_values(*envs):
        if value in text:
            text = text.replace(value, REDACTED)
    return scrub(text)


def redact_env(env: Mapping[str, str]) -> dict[str, str]:
    """A copy of ``env``: secret-looking names lose their values, other values lose secret shapes."""
    return {name: (REDACTED if is_secret_name(name) else scrub(value)) for name, value in env.items()}


def redact_manifest(document: Any) -> Any:
    """A copy of a JSON-like tree with environment redacted: Kubernetes env entries (``{"name": ...,
    "value": ...}``), ``env``/``envs`` string maps with secret-looking names, Secret ``stringData``/``data``,
    and secret shapes in every string."""
    if isinstance(document, list):
        return [redact_manifest(item) for item in document]
    if isinstance(document, str):
        return scrub(document)
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
    if copy.get("kind") == "Secret":
        for key in ("stringData", "data"):
            if isinstance(copy.get(key), dict):
                copy[key] = {k: REDACTED for k in copy[key]}
    return copy


def scrub_model(model: ModelT) -> ModelT:
    """A copy of a pydantic document with ``scrub_known`` applied to every string in it (a doctor report
    quoting log lines): done before rendering, since a table may wrap a secret over two lines."""
    known = known_secret_values()

    def clean(value: Any) -> Any:
        if isinstance(value, str):
            for secret in known:
                value = value.replace(secret, REDACTED)
            return scrub(value)
        if isinstance(value, list):
            return [clean(item) for item in value]
        if isinstance(value, dict):
            return {key: clean(item) for key, item in value.items()}
        return value

    data = model.model_dump(mode="json")
    cleaned = clean(data)
    return model if cleaned == data else type(model).model_validate(cleaned)


def redact_argv(argv: Sequence[str]) -> list[str]:
    """A command line safe to record: ``NAME=VALUE`` (also ``--env=NAME=VALUE``) with a secret-looking
    NAME keeps ``NAME=``; the argument after a secret-looking flag (``--api-key X``) is replaced;
    secret shapes in any argument are scrubbed."""
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
        out.append(scrub(arg))
    return out


class ScrubbingStream(io.TextIOBase):
    """A text stream that writes ``scrub_known`` of whole lines to ``target`` (a partial line waits for
    its end, or for ``flush``), so a secret split over two ``write`` calls is still caught."""

    def __init__(self, target: TextIO) -> None:
        super().__init__()
        self.target = target
        self._pending = ""
        self._known = known_secret_values()
        self._remembered_count = len(_remembered)

    def write(self, text: str) -> int:
        self._pending += text
        cut = self._pending.rfind("\n") + 1
        if cut:
            self._emit(self._pending[:cut])
            self._pending = self._pending[cut:]
        return len(text)

    def flush(self) -> None:
        if self._pending:
            self._emit(self._pending)
            self._pending = ""
        self._guarded(self.target.flush)

    def _emit(self, text: str) -> None:
        if len(_remembered) != self._remembered_count:  # a launch remembered a task's secrets since
            self._known, self._remembered_count = known_secret_values(), len(_remembered)
        for value in self._known:
            if value in text:
                text = text.replace(value, REDACTED)
        clean = scrub(text)
        self._guarded(lambda: self.target.write(clean))

    def _guarded(self, write: Callable[[], object]) -> None:
        """``write()``; a full or failing device (``> /dev/full``) becomes one ``OutputError`` line for the
        CLI's handler, and the stream is pointed at /dev/null so that the interpreter's last flush of what
        is still buffered adds no traceback. A closed pipe (``| head``) stays an ``OSError``, as before."""
        try:
            write()
        except BrokenPipeError:
            raise
        except OSError as exc:
            from gpufabric.errors import OutputError

            name = {1: "standard output", 2: "standard error"}.get(self._fileno(), "an output stream")
            with contextlib.suppress(OSError, ValueError):
                os.dup2(os.open(os.devnull, os.O_WRONLY), self.target.fileno())
            raise OutputError(
                f"{name}: {exc.strerror or exc} while writing; free space on that device or redirect the "
                "output elsewhere"
            ) from None

    def _fileno(self) -> int:
        try:
            return self.target.fileno()
        except (OSError, ValueError):
            return -1

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return self.target.isatty()

    def fileno(self) -> int:
        return self.target.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.target, "encoding", "utf-8")


@contextlib.contextmanager
def scrubbed_std_streams() -> Iterator[None]:
    """``sys.stdout`` and ``sys.stderr`` through ``ScrubbingStream`` for the block (the CLI's whole run)."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = ScrubbingStream(saved[0]), ScrubbingStream(saved[1])
    try:
        yield
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):  # a closed pipe (| head) must not mask the exit
                stream.flush()
        sys.stdout, sys.stderr = saved
