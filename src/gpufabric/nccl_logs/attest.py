"""NCCL log attestation: read NCCL_DEBUG=INFO output into an ``Attestation``, fast and in bounded memory.

Public API: ``attest_lines`` (any iterable of lines), ``attest_files`` (per-rank log files, e.g. the
engine's ``<run_dir>/nccl/nccl.<host>.<pid>.log``, or nccl-tests output with INFO lines mixed in).
Memory is bounded by the cluster (ranks, hosts, NICs, distinct messages) and a few fixed-size caches,
never by the log's length: a 1 GB log is streamed in blocks. Line shapes live in ``patterns.py``;
what a line does is a ``Template`` (``templates.py``); judging the evidence is the doctor's job.

Speed comes from never interpreting a line twice: a block of lines is counted in C into one
``collections.Counter`` keyed by the whole line, and only lines it had not seen (the keys it appended)
are decoded and matched. The result is exactly that of feeding every line in order: idempotent records
are applied at a line's first occurrence, tallies are multiplied, and the few order-sensitive effects
(last-wins assignments, the first channel links) are watched and fall back to an in-order pass over the
block whenever collapsing repeats could change them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from itertools import islice
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

from gpufabric.errors import InputError
from gpufabric.nccl_logs import patterns as pat
from gpufabric.nccl_logs.collectors import unwrap_collector_line
from gpufabric.nccl_logs.state import State
from gpufabric.nccl_logs.templates import EMPTY, Template, line_template, message_template
from gpufabric.results.attestation import MAX_CHANNEL_LINKS, Attestation

BLOCK_BYTES = 2 << 20  # a block of a file is read, split and counted at once
MAX_LINE_BYTES = 1 << 20  # NCCL's lines are a few hundred bytes; a longer one is skipped, not carried
_LINES_PER_BATCH = 1024  # attest_lines: lines counted at once (callers stream; keep the batch small)
# Cache bounds (entries): past one, that cache is emptied (its counts handed on first) and rebuilt.
_LINE_CACHE = 16384
_TEMPLATE_CACHE = 8192  # also bounds the two header caches (line prefix, last tokens -> host, pid)

Line = TypeVar("Line", bytes, str)
# line -> [template, host, pid, applied]: ``applied`` is False until the template's ops ran for this header
_Entry = list[Any]


class _Accumulator(State):
    """``State`` plus the caches that let each distinct line be interpreted once."""

    def __init__(self, *, line_cache: int = _LINE_CACHE, template_cache: int = _TEMPLATE_CACHE) -> None:
        super().__init__()
        self.line_cache_size, self.template_cache_size = line_cache, template_cache
        # line -> occurrences since the last settle; a dict keeps insertion order, so the lines a batch
        # adds are its first-seen lines, in log order, at the end
        self.seen: Counter[Any] = Counter()
        self.entries: dict[Any, _Entry] = {}
        # order-sensitive lines (slots; links while the first ones are kept) -> their count after a batch
        self.watched: dict[Any, int] = {}
        # (level or "", message or line[, plugin origin]) -> template
        self.templates: dict[tuple[Any, ...], Template] = {}
        self.headers: dict[str | bytes, tuple[str, int] | None] = {}  # line prefix -> (host, pid)
        self.header_tails: dict[str, tuple[str, int] | None] = {}  # its last tokens -> (host, pid)

    # -- one batch of lines, in log order ---------------------------------------------------------
    def feed(self, lines: list[Line]) -> None:
        self.lines_read += len(lines)
        seen, entries, watched = self.seen, self.entries, self.watched
        known = len(seen)
        seen.update(lines)  # counted in C; no Python work for a line already seen
        fresh = list(islice(reversed(seen), len(seen) - known))
        fresh.reverse()
        for line in fresh:
            entries[line] = self._entry(line)
        room = len(self.att.channel_links) < MAX_CHANNEL_LINKS
        recurring = [line for line, last in watched.items() if seen[line] != last]
        ordered = [entries[line] for line in recurring]
        ordered += [e for line in fresh if (e := entries[line])[0].ordered and (e[0].slots or room)]
        if ordered and self._needs_log_order(ordered, room):
            for line in lines:
                self._occur(entries[line])
        else:
            for line in fresh:  # first-seen order: the order every idempotent record wants
                self._occur(entries[line])
            for line in recurring:  # these lines' records ran before; only their last-wins fields remain
                for key, value in entries[line][0].slots:
                    self.assign(key, value)
        for line in recurring:
            watched[line] = seen[line]
        for line in fresh:
            template = entries[line][0]
            if template.slots or (template.link is not None and room):
                watched[line] = seen[line]
        if room and len(self.att.channel_links) >= MAX_CHANNEL_LINKS:  # links no longer need log order
            self.watched = {line: n for line, n in watched.items() if entries[line][0].slots}
        if len(self.templates) > self.template_cache_size:
            self.settle()
        elif len(seen) > self.line_cache_size:
            self._forget_lines()
        # nothing is counted in the header caches: forgetting costs only re-parsing
        if len(self.headers) > self.template_cache_size:
            self.headers.clear()
        if len(self.header_tails) > self.template_cache_size:
            self.header_tails.clear()

    def _needs_log_order(self, entries: list[_Entry], room: bool) -> bool:
        """True when applying each distinct line once, at its first occurrence, could differ from log order:
        channel links while the first MAX_CHANNEL_LINKS are still being kept, or one field assigned two
        different values in this batch (last wins, so the interleaving decides)."""
        values: dict[tuple[str, str], str] = {}
        for entry in entries:
            template: Template = entry[0]
            if room and template.link is not None:
                return True
            for key, value in template.slots:
                if values.setdefault(key, value) != value:
                    return True
        return False

    def _occur(self, entry: _Entry) -> None:
        template, host, pid, applied = entry
        if not applied:
            self.apply_ops(template, host, pid)
            entry[3] = True
        for key, value in template.slots:
            self.assign(key, value)
        if template.link is not None and len(self.att.channel_links) < MAX_CHANNEL_LINKS:
            self.add_link(template.link, host)

    # -- interpreting a line never seen before ----------------------------------------------------
    def _entry(self, raw: bytes | str) -> _Entry:
        if raw.lstrip()[:1] in ("{", b"{"):  # a collector's JSON record around the line (collectors.py)
            text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
            inner = unwrap_collector_line(text)
            if inner is not None and len(inner) < len(text):
                return self._entry(inner)
        if isinstance(raw, bytes):
            # The common shape, `<header> NCCL INFO <msg>`, without decoding the line or a regex. Decoding
            # the parts apart equals decoding the whole: a UTF-8 sequence never spans an ASCII byte.
            at = raw.find(b"NCCL ")
            if at >= 0 and raw.startswith(b"NCCL INFO ", at) and b"NCCL version" not in raw:
                return self._info_entry(raw[:at], raw[at + 10 :])
            line = raw.decode("utf-8", "replace")
        else:
            line = raw
        marker = pat.MARKER.search(line) if "NCCL" in line else None
        if marker is None or "NCCL version" in line:
            template = line_template(line, marker)
            if template is not EMPTY:
                template = self.templates.setdefault(("", line), template)
            return [template, None, None, False]
        prefix = line[: marker.start()]
        host, pid = self._header(prefix)
        level = marker.group("level")
        origin = pat.plugin_origin(prefix) if level != "INFO" else None
        key = (level, line[marker.end() :].strip(), origin)
        known = self.templates.get(key)
        if known is None:
            known = self.templates[key] = message_template(*key)
        return [known, host, pid, False]

    def _info_entry(self, prefix: bytes, msg: bytes) -> _Entry:
        """An INFO line's entry from its undecoded header and message (both cached by their bytes)."""
        host, pid = self._header(prefix)
        key = ("INFO", msg)
        known = self.templates.get(key)
        if known is None:
            known = self.templates[key] = message_template("INFO", msg.decode("utf-8", "replace").strip())
        return [known, host, pid, False]

    def _header(self, prefix: bytes | str) -> tuple[str | None, int | None]:
        """(host, pid) of NCCL's ``host:pid:tid [dev]`` header that ends ``prefix``, cached."""
        if prefix in self.headers:
            header = self.headers[prefix]
        else:
            text = prefix.decode("utf-8", "replace") if isinstance(prefix, bytes) else prefix
            # split_header reads only the last tokens (the last two when the last is `[dev]`, which is
            # never a source location): key on those, so per-line text in front (a timestamp) still hits
            tokens = text.rsplit(None, 3)
            tail = " ".join(tokens[-2:] if tokens and tokens[-1].startswith("[") else tokens[-3:])
            if tail in self.header_tails:
                header = self.header_tails[tail]
            else:
                header = self.header_tails[tail] = pat.split_header(tail)
            self.headers[prefix] = header
        return header if header else (None, None)

    def _forget_lines(self) -> None:
        """Hand the lines' counts to their templates and forget the lines (the templates stay)."""
        entries = self.entries
        for line, n in self.seen.items():
            entries[line][0].hits += n
        self.seen.clear()
        self.watched.clear()
        entries.clear()

    def settle(self) -> None:
        """Tally every template's occurrences and forget all caches (they are rebuilt on demand)."""
        self._forget_lines()
        for template in self.templates.values():
            self.tally(template)
        self.templates.clear()
        self.headers.clear()
        self.header_tails.clear()

    def finish(self) -> Attestation:
        self.settle()
        return self.result()


def _split(data: bytes, final: bool) -> tuple[list[bytes], bytes]:
    """Lines of ``data`` and the unfinished rest; \\n, \\r\\n and \\r end a line, as in text mode."""
    tail = b""
    if b"\r" in data:
        if not final and data.endswith(b"\r"):
            data, tail = data[:-1], b"\r"  # maybe the first half of \r\n: decide with the next block
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    lines = data.split(b"\n")
    rest = lines.pop()
    if final and (rest or tail):
        lines.append(rest + tail.replace(b"\r", b""))
        rest, tail = b"", b""
    return lines, rest + tail


def _feed_file(acc: _Accumulator, handle: BinaryIO, unread: UnreadParts) -> None:
    """Feed ``handle``'s lines block by block. NUL bytes (the zero padding a crashed node's file system
    leaves where data never reached the disk) are dropped and counted, and a line longer than
    ``MAX_LINE_BYTES`` is skipped to its end and counted: memory stays one block, whatever the file holds."""
    rest = b""
    skipping = False  # inside a line already over the limit: read past it, keep nothing
    while chunk := handle.read(BLOCK_BYTES):
        if b"\0" in chunk:
            unread.nul_bytes += chunk.count(b"\0")
            chunk = chunk.replace(b"\0", b"")
        if skipping:
            end = min((at for at in (chunk.find(b"\n"), chunk.find(b"\r")) if at >= 0), default=-1)
            if end < 0:
                continue
            chunk, skipping = chunk[end + 1 :], False
        if b"\r" in chunk or rest.endswith(b"\r"):
            lines, rest = _split(rest + chunk, final=False)
        else:  # the common case: no copy of the block, the unfinished line joins the first one
            lines = chunk.split(b"\n")
            lines[0] = rest + lines[0]
            rest = lines.pop()
        if len(rest) > MAX_LINE_BYTES:
            rest, skipping = b"", True
            unread.long_lines += 1
        if lines:
            acc.feed(lines)
    lines, _ = _split(rest, final=True)
    if lines:
        acc.feed(lines)


class UnreadParts:
    """What ``_feed_file`` left out of one file, said in one note."""

    def __init__(self) -> None:
        self.nul_bytes = 0
        self.long_lines = 0

    def note(self, path: Path) -> str | None:
        parts = []
        if self.nul_bytes:
            parts.append(
                f"{self.nul_bytes:,} NUL bytes (the zero padding a crashed node's file system leaves)"
            )
        if self.long_lines:
            parts.append(
                f"{self.long_lines:,} line(s) over {MAX_LINE_BYTES >> 20} MiB (no NCCL line is that long)"
            )
        return f"{path}: skipped {' and '.join(parts)}; the rest was read" if parts else None


def attest_lines(lines: Iterable[str], *, source: str | None = None) -> Attestation:
    """Attest one stream of lines (a file object, a generator, a list); ``source`` names it in the result."""
    # Small caches: callers of this API stream lines one by one and expect a small, constant footprint.
    acc = _Accumulator(line_cache=2048, template_cache=1024)
    batch: list[str] = []
    for line in lines:
        batch.append(line)
        if len(batch) >= _LINES_PER_BATCH:
            acc.feed(batch)
            batch = []
    if batch:
        acc.feed(batch)
    att = acc.finish()
    if source:
        att.source_files = [source]
    return att


def attest_files(paths: Sequence[Path]) -> Attestation:
    """Attest the per-rank logs of one run together (one attestation for the run), streamed block by block."""
    acc = _Accumulator()
    notes = []
    for path in paths:
        unread = UnreadParts()
        try:
            with path.open("rb") as handle:
                _feed_file(acc, handle, unread)
        except OSError as exc:
            raise InputError(f"{path}: cannot read NCCL log ({exc.strerror or exc}); check the path") from exc
        if note := unread.note(path):
            notes.append(note)
    att = acc.finish()
    att.source_files = [str(p) for p in paths]
    att.unread = notes
    return att
