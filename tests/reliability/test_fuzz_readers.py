"""Hostile input: property-based fuzzing of every reader, >= 100k generated cases at full scale (``slow``).

Readers: nccl-tests text and -J JSON, NCCL debug logs (attestation), our result JSON and JSONL stream,
what ``show``/``bench`` print (table, csv, markdown), the sniffing ``read_run`` on raw bytes and on
byte-damaged fixtures under every suffix, task YAML, catalog data files. Cases mix structure-aware
mutations of the real fixtures (lines dropped, duplicated, swapped, cut, words replaced by hostile
tokens, JSON nodes replaced, deleted or retyped) with raw text and bytes from hypothesis. The
property: a reader returns a result or raises a ``GpufabricError`` whose message is one line naming
the source; any other exception is a bug.

``FUZZ_SCALE`` (env) scales every test's ``max_examples``; the sum at 1.0 is printed by
``test_the_suite_adds_up_to_100k`` and must stay >= 100 000. ``make test`` runs a quarter of it (about
27,000 cases; CI's examples are derandomized, so every run draws the same ones and a larger count buys no
new inputs from run to run): ``FUZZ_SCALE=1`` runs all 109,000, and ``benchmarks/fuzz_long.py`` explores
fresh seeds by the million (docs/reliability.md).
"""

from __future__ import annotations

import copy
import json
import os
import random
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpufabric.catalog.loader import parse_data_file
from gpufabric.errors import GpufabricError
from gpufabric.nccl_logs.attest import attest_lines
from gpufabric.report.nccl_table import render_run
from gpufabric.results.io import StreamWriter, read_stream, result_from_dict
from gpufabric.results.readers import read_run
from gpufabric.results.readers.nccl_json import looks_like_nccl_tests_json, read_nccl_json
from gpufabric.results.readers.nccl_text import NcclTextReader
from gpufabric.task.load import task_from_text

pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SCALE = float(os.environ.get("FUZZ_SCALE", "0.25"))
EXAMPLES = {
    "nccl_text": 24_000,
    "nccl_text_raw": 3_000,
    "nccl_json": 10_000,
    "nccl_log": 14_000,
    "nccl_log_raw": 2_000,
    "result_json": 12_000,
    "result_stream": 8_000,
    "read_run_raw": 4_000,
    "read_run_mutated": 6_000,
    "ours_formats": 4_000,
    "byte_mutation": 4_000,
    "task_yaml": 8_000,
    "task_yaml_raw": 2_000,
    "catalog": 8_000,
}


def fuzz(name: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    return settings(
        max_examples=max(1, int(EXAMPLES[name] * SCALE)),
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
    )


def rejected_cleanly(call: Callable[[], object], source: str) -> None:
    """The property: success, or one ``GpufabricError`` line that names ``source``."""
    try:
        call()
    except GpufabricError as exc:
        message = str(exc)
        assert "\n" not in message and "\r" not in message, f"multi-line error: {message!r}"
        assert source in message, f"error does not name {source}: {message!r}"


def _lines(paths: list[Path]) -> list[list[str]]:
    return [p.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True) for p in paths]


NCCL_TEXT = _lines(
    [
        *sorted((FIXTURES / "nccl_tests").glob("*.log")),
        *sorted((FIXTURES / "nccl_tests" / "public").glob("*.txt")),
    ]
)
NCCL_JSON = [p.read_text(encoding="utf-8") for p in sorted((FIXTURES / "nccl_tests").glob("*.json"))]
NCCL_LOGS = _lines(sorted((FIXTURES / "nccl_logs").rglob("*.log")))
RESULT_FILES = [
    *sorted((FIXTURES / "nccl_tests" / "golden").glob("*.json"))[:4],
    FIXTURES / "gpu_h200x4" / "bench_allreduce_nvlink.json",
]
RESULTS = [json.loads(p.read_text(encoding="utf-8")) for p in RESULT_FILES]
TASKS = [p.read_text(encoding="utf-8") for p in sorted((FIXTURES / "launch").glob("*.yaml"))]
CATALOG = {
    name: resources.files("gpufabric.catalog").joinpath("data", name).read_text(encoding="utf-8")
    for name in ("aws.yaml", "gcp.yaml", "ib.yaml", "fabrics.yaml", "baselines.yaml", "node_labels.yaml")
}

NASTY = [
    "", " ", "\t", "-1", "0", "nan", "inf", "-inf", "1e309", "99999999999999999999", "N/A", "#", "{", "}",
    "[", "]", ":", "null", "true", "\x00", "\ufeff", "é", "\u202e", "\r", "|", "*", "&a", "!!python/object",
    "%", "'", '"', "\\", "---", "- ", "? ", "<<: *a", "\x1b[0m", "1.5e-7", "0x1F", "  ",
    "9" * 5000, "-" + "1" * 4400, "2024-13-45 99:99:99", "9999-99-99", "[1,0]<stdout>:", " " * 3000,
]  # fmt: skip
ALPHABET = "abcXYZ019 .,:;-_=+/#{}[]\"'\t\\|*&!%@$()<>~`\x00\x1b\x7f\u00e9\u4e2d\ud7ff\u202e\ufeff"
SEEDS = st.integers(0, 2**64 - 1)
"""Structure-aware cases are driven by a hypothesis-drawn seed (cheap to draw, so 100k cases fit in
minutes; a failure prints the seed, which replays it exactly); raw-text cases use hypothesis' own
``st.text``/``st.binary`` generators."""


def random_text(rnd: random.Random, max_size: int = 40) -> str:
    if rnd.random() < 0.4:
        return rnd.choice(NASTY)
    if rnd.random() < 0.3:
        return str(rnd.choice([rnd.randint(-(2**70), 2**70), rnd.uniform(-1e6, 1e6), rnd.random()]))
    return "".join(rnd.choice(ALPHABET) for _ in range(rnd.randint(0, max_size)))


def mutate_lines(rnd: random.Random, lines: list[str]) -> list[str]:
    """A fixture's lines after a few structural mutations."""
    lines = list(lines)
    for _ in range(rnd.randint(0, 6)):
        if not lines:
            lines.append(random_text(rnd, 80))
            continue
        i = rnd.randrange(len(lines))
        op = rnd.randrange(8)
        if op == 0:
            del lines[i]
        elif op == 1:
            lines.insert(i, lines[i])
        elif op == 2:
            j = rnd.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        elif op == 3:
            lines[i] = lines[i][: rnd.randint(0, len(lines[i]))]
        elif op == 4:
            words = lines[i].split(" ")
            words[rnd.randrange(len(words))] = random_text(rnd)
            lines[i] = " ".join(words)
        elif op == 5:
            lines.insert(i, random_text(rnd, 120) + "\n")
        elif op == 6:
            lines = lines[: i + 1]
        else:
            cut = rnd.randint(0, len(lines[i]))
            lines[i] = lines[i][:cut] + random_text(rnd) + lines[i][cut:]
    return lines


def random_json(rnd: random.Random, depth: int = 0) -> Any:
    kind = rnd.randrange(9 if depth < 3 else 7)
    if kind == 0:
        return None
    if kind == 1:
        return rnd.random() < 0.5
    if kind == 2:
        return rnd.choice([0, -1, 1, 2**63, -(2**70), rnd.randint(-1000, 10**6)])
    if kind == 3:
        return rnd.choice([0.0, -0.0, 1e308, -1e-308, float("nan"), float("inf"), rnd.uniform(-1e9, 1e9)])
    if kind in (4, 5, 6):
        return random_text(rnd)
    if kind == 7:
        return [random_json(rnd, depth + 1) for _ in range(rnd.randint(0, 3))]
    return {random_text(rnd, 8): random_json(rnd, depth + 1) for _ in range(rnd.randint(0, 3))}


def mutate_json(rnd: random.Random, document: Any) -> Any:
    """A deep copy of a fixture document with a few nodes replaced, deleted or retyped."""
    doc = copy.deepcopy(document)
    for _ in range(rnd.randint(1, 4)):
        parent: Any = None
        key: Any = None
        node = doc
        for _depth in range(rnd.randint(0, 6)):
            if isinstance(node, dict) and node:
                parent, key = node, rnd.choice(list(node))
            elif isinstance(node, list) and node:
                parent, key = node, rnd.randrange(len(node))
            else:
                break
            node = parent[key]
        if parent is None:
            continue
        if rnd.random() < 0.3 and isinstance(parent, dict):
            del parent[key]
        else:
            parent[key] = random_json(rnd)
    return doc


def _trimmed(document: dict[str, Any]) -> dict[str, Any]:
    """A result document with at most 3 rows per series (mutating 30 rows teaches nothing 3 do not)."""
    doc = copy.deepcopy(document)
    for series in doc.get("series", []):
        series["rows"] = series.get("rows", [])[:3]
    return doc


# --- nccl-tests text -----------------------------------------------------------------------------


def _read_text(lines: list[str]) -> None:
    reader = NcclTextReader(Path("fuzz.log"))
    for line in lines:
        reader.feed(line)
    reader.result(None)


@fuzz("nccl_text")
@given(SEEDS)
def test_nccl_tests_text_mutations(seed: int) -> None:
    rnd = random.Random(seed)
    lines = mutate_lines(rnd, rnd.choice(NCCL_TEXT))
    rejected_cleanly(lambda: _read_text(lines), "fuzz.log")


@fuzz("nccl_text_raw")
@given(st.lists(st.text(max_size=200), max_size=30))
def test_nccl_tests_text_raw(lines: list[str]) -> None:
    rejected_cleanly(lambda: _read_text(lines), "fuzz.log")


# --- nccl-tests JSON -----------------------------------------------------------------------------


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):  # ValueError: bad JSON, or an integer over 4,300 digits
        return None


NCCL_JSON_DOCS = [doc for doc in map(_loads, NCCL_JSON) if doc is not None]
NCCL_JSON_LINES = [text.splitlines(keepends=True) for text in NCCL_JSON]


def _read_nccl_json(text: str) -> None:
    document = _loads(text)
    if document is not None and not looks_like_nccl_tests_json(document):
        return  # read_run sends such documents to our own reader (fuzzed below)
    read_nccl_json(Path("fuzz.json"), text, document)


@fuzz("nccl_json")
@given(SEEDS)
def test_nccl_tests_json_mutations(seed: int) -> None:
    rnd = random.Random(seed)
    if rnd.random() < 0.5:
        text = json.dumps(mutate_json(rnd, rnd.choice(NCCL_JSON_DOCS)))
    else:
        text = "".join(mutate_lines(rnd, rnd.choice(NCCL_JSON_LINES)))
    rejected_cleanly(lambda: _read_nccl_json(text), "fuzz.json")


# --- NCCL debug logs -----------------------------------------------------------------------------


@fuzz("nccl_log")
@given(SEEDS)
def test_nccl_log_mutations(seed: int) -> None:
    rnd = random.Random(seed)
    if rnd.random() < 0.85:
        lines = mutate_lines(rnd, rnd.choice(NCCL_LOGS))
    else:
        lines = [random_text(rnd, 200) for _ in range(rnd.randint(0, 20))]
    rejected_cleanly(lambda: attest_lines(lines, source="fuzz-nccl.log"), "fuzz-nccl.log")


@fuzz("nccl_log_raw")
@given(st.lists(st.text(max_size=200), max_size=20))
def test_nccl_log_raw(lines: list[str]) -> None:
    rejected_cleanly(lambda: attest_lines(lines, source="fuzz-nccl.log"), "fuzz-nccl.log")


# --- our result JSON and JSONL stream ------------------------------------------------------------

TRIMMED = [_trimmed(doc) for doc in RESULTS]


@fuzz("result_json")
@given(SEEDS)
def test_result_json_mutations(seed: int) -> None:
    rnd = random.Random(seed)
    doc = mutate_json(rnd, rnd.choice(TRIMMED))
    rejected_cleanly(lambda: result_from_dict(doc, source="fuzz-result.json"), "fuzz-result.json")


def _stream_lines(tmp: Path) -> list[list[str]]:
    corpus = []
    for index, doc in enumerate(TRIMMED):
        result = result_from_dict(doc, source="fixture")
        path = tmp / f"stream{index}.jsonl"
        writer = StreamWriter(path)
        writer.header(result.label, result.metadata)
        for series in result.series:
            for row in series.rows:
                writer.row(series.collective, series.nranks, row)
        writer.end(complete=True)
        writer.close()
        corpus.append(path.read_text(encoding="utf-8").splitlines(keepends=True))
    return corpus


@pytest.fixture(scope="module")
def stream_corpus(tmp_path_factory: pytest.TempPathFactory) -> list[list[str]]:
    return _stream_lines(tmp_path_factory.mktemp("streams"))


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


@fuzz("result_stream")
@given(seed=SEEDS)
def test_result_stream_mutations(seed: int, stream_corpus: list[list[str]], scratch: Path) -> None:
    rnd = random.Random(seed)
    lines = mutate_lines(rnd, rnd.choice(stream_corpus))
    if lines and rnd.random() < 0.4:  # a structural change inside one record
        i = rnd.randrange(len(lines))
        record = _loads(lines[i])
        if record is not None:
            lines[i] = json.dumps(mutate_json(rnd, record)) + "\n"
    path = scratch / "fuzz-stream.jsonl"
    path.write_text("".join(lines), encoding="utf-8", errors="surrogatepass")
    rejected_cleanly(lambda: read_stream(path), "fuzz-stream.jsonl")


@fuzz("read_run_raw")
@given(raw=st.binary(max_size=400) | st.text(max_size=300).map(lambda t: t.encode("utf-8", "surrogatepass")))
def test_read_run_on_raw_bytes(raw: bytes, scratch: Path) -> None:
    """The entry point users call (sniffing, then any reader) on bytes from anywhere."""
    path = scratch / "fuzz-any.txt"
    path.write_bytes(raw)
    rejected_cleanly(lambda: read_run(path), "fuzz-any.txt")


@fuzz("read_run_mutated")
@given(seed=SEEDS)
def test_read_run_on_mutated_files(seed: int, scratch: Path, stream_corpus: list[list[str]]) -> None:
    rnd = random.Random(seed)
    pick = rnd.randrange(4)
    if pick == 0:
        text = json.dumps(mutate_json(rnd, rnd.choice(TRIMMED)))
    elif pick == 1:
        text = "".join(mutate_lines(rnd, rnd.choice(NCCL_TEXT)))
    elif pick == 2:
        text = "".join(mutate_lines(rnd, rnd.choice(stream_corpus)))
    else:
        text = "".join(mutate_lines(rnd, rnd.choice(NCCL_JSON_LINES)))
    path = scratch / "fuzz-any.txt"
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    rejected_cleanly(lambda: read_run(path), "fuzz-any.txt")


# --- what gpufabric itself prints (table, csv, markdown) and raw byte damage --------------------

OURS = {
    suffix: [
        render_run(result_from_dict(doc, source="fixture"), fmt).splitlines(keepends=True) for doc in TRIMMED
    ]
    for fmt, suffix in (("table", ".txt"), ("csv", ".csv"), ("markdown", ".md"))
}


@fuzz("ours_formats")
@given(seed=SEEDS)
def test_our_printed_formats_mutated(seed: int, scratch: Path) -> None:
    """``show``/``bench`` output in every text format, damaged, read back through the sniffer."""
    rnd = random.Random(seed)
    suffix = rnd.choice(sorted(OURS))
    path = scratch / f"fuzz-ours{suffix}"
    path.write_bytes("".join(mutate_lines(rnd, rnd.choice(OURS[suffix]))).encode("utf-8", "surrogatepass"))
    rejected_cleanly(lambda: read_run(path), path.name)


BYTE_CORPUS = [
    "".join(lines).encode("utf-8", "surrogatepass")
    for lines in [*NCCL_TEXT, *NCCL_JSON_LINES, *(one for each in OURS.values() for one in each)]
]
DAMAGE = [b"\xff", b"\xfe", b"\x00", b"\r", b"\n", b"\x80", b"\xc3", b"{", b"#", b"9" * 5000, b"\xef\xbb\xbf"]


@fuzz("byte_mutation")
@given(seed=SEEDS)
def test_every_reader_on_byte_damaged_files(seed: int, scratch: Path) -> None:
    """Real files with bytes flipped, inserted or cut (invalid UTF-8 included), under every suffix."""
    rnd = random.Random(seed)
    data = bytearray(rnd.choice(BYTE_CORPUS))
    for _ in range(rnd.randint(1, 8)):
        at = rnd.randrange(len(data) + 1)
        op = rnd.randrange(4)
        if op == 0 and data:
            data[min(at, len(data) - 1)] = rnd.randrange(256)
        elif op == 1:
            data[at:at] = rnd.choice(DAMAGE)
        elif op == 2:
            del data[at : at + rnd.randint(1, 64)]
        else:
            data = data[:at]
    path = scratch / f"fuzz-bytes{rnd.choice(['.txt', '.json', '.jsonl', '.csv', '.md', '.log'])}"
    path.write_bytes(bytes(data))
    rejected_cleanly(lambda: read_run(path), path.name)


# --- task YAML and catalog data ------------------------------------------------------------------

TASK_LINES = [text.splitlines(keepends=True) for text in TASKS]


@fuzz("task_yaml")
@given(SEEDS)
def test_task_yaml_mutations(seed: int) -> None:
    rnd = random.Random(seed)
    text = "".join(mutate_lines(rnd, rnd.choice(TASK_LINES)))
    rejected_cleanly(lambda: task_from_text(text, source="fuzz-task.yaml"), "fuzz-task.yaml")


@fuzz("task_yaml_raw")
@given(st.text(max_size=200))
def test_task_yaml_raw(text: str) -> None:
    rejected_cleanly(lambda: task_from_text(text, source="fuzz-task.yaml"), "fuzz-task.yaml")


def _entries(text: str) -> tuple[str, list[str]]:
    """(header up to the list key, one chunk of lines per top-level list entry)."""
    lines = text.splitlines(keepends=True)
    starts = [i for i, line in enumerate(lines) if line.startswith(("- ", "  - "))]
    header = "".join(lines[: starts[0]]) if starts else text
    chunks = ["".join(lines[a:b]) for a, b in zip(starts, [*starts[1:], len(lines)], strict=True)]
    return header, chunks


CATALOG_ENTRIES = {name: _entries(text) for name, text in CATALOG.items()}


@fuzz("catalog")
@given(SEEDS)
def test_catalog_data_mutations(seed: int) -> None:
    """One or two entries of a shipped data file under its real header (full files are slow to parse)."""
    rnd = random.Random(seed)
    name = rnd.choice(sorted(CATALOG))
    header, chunks = CATALOG_ENTRIES[name]
    lines = [line for _ in range(rnd.randint(1, 2)) for line in rnd.choice(chunks).splitlines(keepends=True)]
    lines = mutate_lines(rnd, lines) if rnd.random() < 0.9 else [random_text(rnd, 80)]
    text = header + "".join(lines)
    rejected_cleanly(lambda: parse_data_file(name, text), name)


def test_the_suite_adds_up_to_100k() -> None:
    total = sum(EXAMPLES.values())
    print(f"fuzz cases at FUZZ_SCALE=1: {total}")
    assert total >= 100_000
