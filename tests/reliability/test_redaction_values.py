"""``redact.scrub``: secret shapes lose their secret part, ordinary fabric text is left alone; names with
PASS are secret; the CLI's scrubbing stream catches a secret split over two writes; failure messages
never quote the ranks' protocol records."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from gpufabric.launch.output import last_output_clause, strip_protocol
from gpufabric.redact import (
    REDACTED,
    ScrubbingStream,
    is_secret,
    is_secret_name,
    redact_argv,
    redact_env,
    redact_manifest,
    scrub,
)

# Token shapes as their issuers document them; the values themselves are made up.
SHAPES = [
    ("DATABASE_URL=https://user:hunter2@db:5432/x", "DATABASE_URL=https://<redacted>@db:5432/x"),
    ("redis://:only-a-password@cache:6379", "redis://<redacted>@cache:6379"),
    (
        "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=c2VjcmV0a2V5==;EndpointSuffix=core.windows.net",
        "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=<redacted>;EndpointSuffix=core.windows.net",
    ),
    ("Server=tcp:db;User ID=u;Password=p@ss w0rd;", "Server=tcp:db;User ID=u;Password=<redacted>;"),
    (
        "Endpoint=sb://ns/;SharedAccessKeyName=k;SharedAccessKey=abc123=",
        "Endpoint=sb://ns/;SharedAccessKeyName=k;SharedAccessKey=<redacted>",
    ),
    (
        "https://acct.blob.core.windows.net/c?sv=2022-11-02&sig=abcdEFGH1234ijkl%2B%3D",
        "https://acct.blob.core.windows.net/c?sv=2022-11-02&sig=<redacted>",
    ),
    ("key AKIAIOSFODNN7EXAMPLE here", f"key {REDACTED} here"),
    ("ghp_" + "A1b2" * 9, REDACTED),
    ("gho_" + "z" * 36, REDACTED),
    ("github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", REDACTED),
    ("HF_TOKEN hf_" + "aBcD" * 8 + "xy", f"HF_TOKEN {REDACTED}"),
    ("wandb_v1_" + "k" * 77, REDACTED),
    ("local-" + "0123456789abcdef" * 2 + "01234567", REDACTED),
    ("xoxb-123456789012-123456789012-abcdefABCDEF", REDACTED),
    ("xapp-1-A0123-456-abcdef", REDACTED),
    ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", REDACTED),
    ("Authorization: Bearer abcdefghijklmnopqrstuvwxyz0123", f"Authorization: Bearer {REDACTED}"),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEo\n-----END RSA PRIVATE KEY-----", REDACTED),
]

UNTOUCHED = [
    "host:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB eth0:10.0.0.1<0>",
    "NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read",
    "https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md",
    "http://10.0.0.1:8080/metrics",
    "ssh user@host.example.com:22",
    "commit 0123456789abcdef0123456789abcdef01234567",
    "Bearer tokens are described in RFC 6750",
    "#  size  count  type  redop  root  time  algbw  busbw  #wrong",
    "NCCL_IB_HCA=mlx5_0:1,mlx5_1:1 NCCL_SOCKET_IFNAME=eth0",
]


@pytest.mark.parametrize(("text", "expected"), SHAPES)
def test_secret_shapes_lose_their_secret_part(text: str, expected: str) -> None:
    assert scrub(text) == expected


@pytest.mark.parametrize("text", UNTOUCHED)
def test_fabric_text_is_left_alone(text: str) -> None:
    assert scrub(text) == text


@pytest.mark.parametrize("name", ["DB_PASS", "MYSQL_PASSWD", "PGPASSWORD", "passphrase", "NCCL_IB_PASSWORD"])
def test_pass_names_are_secret(name: str) -> None:
    assert is_secret_name(name)
    assert redact_env({name: "x"}) == {name: REDACTED}


def test_values_under_plain_names_are_scrubbed_everywhere() -> None:
    url = "https://u:pw-9@db/x"
    assert redact_env({"DATABASE_URL": url}) == {"DATABASE_URL": "https://<redacted>@db/x"}
    assert is_secret("DATABASE_URL", url) and not is_secret("NCCL_DEBUG", "INFO")
    assert redact_argv(["--env", f"DATABASE_URL={url}"]) == [
        "--env",
        "DATABASE_URL=https://<redacted>@db/x",
    ]
    manifest = {"kind": "Pod", "spec": {"containers": [{"env": [{"name": "DATABASE_URL", "value": url}]}]}}
    assert redact_manifest(manifest)["spec"]["containers"][0]["env"][0]["value"] == "https://<redacted>@db/x"
    secret = {"kind": "Secret", "stringData": {"DATABASE_URL": url, "X": "plain"}}
    assert redact_manifest(secret)["stringData"] == {"DATABASE_URL": REDACTED, "X": REDACTED}


def test_the_stream_catches_a_secret_split_over_two_writes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_API_TOKEN", "split-secret-value")
    target = io.StringIO()
    stream = ScrubbingStream(target)
    stream.write("a split-sec")
    stream.write("ret-value and https://u:pw@h\npartial")
    assert target.getvalue() == "a <redacted> and https://<redacted>@h\n"
    stream.flush()
    assert target.getvalue().endswith("\npartial")


def test_written_files_are_scrubbed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gpufabric.outputs import write_output

    monkeypatch.setenv("SOME_SECRET", "verbatim-secret-1")
    write_output(tmp_path / "o.txt", "a verbatim-secret-1 b AKIAIOSFODNN7EXAMPLE\n")
    assert (tmp_path / "o.txt").read_text(encoding="utf-8") == "a <redacted> b <redacted>\n"


def test_failure_messages_leave_protocol_records_out() -> None:
    stage = 'GPUFABRIC_STAGE {"stage": "all_reduce 1 KB", "rank": 1}'
    assert strip_protocol(stage) == ""
    assert strip_protocol("RuntimeError: peer closed " + stage) == "RuntimeError: peer closed"
    lines = ["Traceback (most recent call last):", "RuntimeError: Connection reset by peer", stage]
    assert last_output_clause(lines) == "; last output: 'RuntimeError: Connection reset by peer'"
    assert last_output_clause(['GPUFABRIC_PROGRESS {"done": 1}']) == ""
    assert (
        last_output_clause(["GPUFABRIC_FAULT: rank 1 hangs"])
        == "; last output: 'GPUFABRIC_FAULT: rank 1 hangs'"
    )
