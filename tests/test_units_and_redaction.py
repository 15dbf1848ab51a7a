from __future__ import annotations

import pytest

from gpufabric.errors import UsageError
from gpufabric.redact import REDACTED, redact_env
from gpufabric.units import human_size, parse_size, size_span, size_sweep


@pytest.mark.parametrize(
    ("text", "expected"),
    [("8", 8), ("1K", 1024), ("1k", 1024), ("2G", 2 << 30), ("1 KB", 1024), ("4M", 4 << 20), ("1.5K", 1536)],
)
def test_parse_size(text: str, expected: int) -> None:
    assert parse_size(text) == expected


@pytest.mark.parametrize("text", ["", "abc", "1Q", "-5", "0.3"])
def test_parse_size_rejects(text: str) -> None:
    with pytest.raises(UsageError):
        parse_size(text)


@pytest.mark.parametrize(
    ("num", "expected"),
    [(8, "8 B"), (1024, "1 KB"), (2 << 30, "2 GB"), (1536, "1.5 KB"), (512 << 20, "512 MB")],
)
def test_human_size(num: int, expected: str) -> None:
    assert human_size(num) == expected


def test_size_span_is_one_size_where_both_ends_are_the_same() -> None:
    assert size_span(8, 256 << 10) == "8 B - 256 KB"
    assert size_span(1 << 20, 1 << 20) == "1 MB"


def test_sweep_matches_nccl_tests() -> None:
    assert size_sweep(8, 128, 2) == [8, 16, 32, 64, 128]
    assert len(size_sweep(8, 2 << 30, 2)) == 29
    assert size_sweep(1024, 4096, step_bytes=1024) == [1024, 2048, 3072, 4096]


def test_sweep_rejects_inverted_range() -> None:
    with pytest.raises(UsageError, match="-b/-e"):
        size_sweep(2 << 30, 1024)


def test_redaction_keeps_names_drops_values() -> None:
    env = {
        "AWS_SECRET_ACCESS_KEY": "abc",
        "HF_TOKEN": "t",
        "db_password": "p",
        "NCCL_DEBUG": "INFO",
        "MY_CREDENTIALS_FILE": "x",
        "api_key": "k",
    }
    red = redact_env(env)
    assert red["NCCL_DEBUG"] == "INFO"
    assert all(red[k] == REDACTED for k in env if k != "NCCL_DEBUG")
