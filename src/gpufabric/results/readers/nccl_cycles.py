"""Whole nccl-tests ``-N`` cycles that change nothing but a counter, recognised in bulk by one regex.

A log of ``-N`` run cycles repeats one sweep of sizes over and over. The reader keeps the first
``MAX_CYCLES`` printings of each size (``nccl_series.Cycles``); every later one only adds one to that
size's ``dropped`` count, once it has been parsed (a data line that does not parse marks the table as
cut short instead) and checked against the sweep order (``sweep_order``). A gigabyte of such rows cost a
Python parse per line: about 100 CPU-seconds.

Once every size of a variant's sweep is full, the rows of one whole cycle are known before they are read:
the same parameter columns (size, count, type, redop, root), in the same order, each followed by numbers.
``cycle_pattern`` writes that cycle as one compiled regex, with the parameters as literals and each
number in a form that ``parse_data_line`` accepts with the same key; ``skip_full_cycles`` matches as many
whole cycles as follow in one call (SRE, in C) and applies their effect at once: each size's ``dropped``
grows by the number of cycles and the sweep is back at its first size. Anything the pattern does not
match exactly (another spelling of a number, a prefix, a cut row, a new variant) is left to the line by
line reader, so results are the same; the pattern only decides how fast they come.
"""

from __future__ import annotations

import re

from gpufabric.results.readers.nccl_columns import Layout
from gpufabric.results.readers.nccl_series import CyclePattern, RowKey, Table
from gpufabric.results.readers.sweep_order import Variant

# nccl-tests pads with spaces; a tab (an edited log) is left to the line-by-line reader. Spaces alone
# keep SRE's loop tight (a quarter faster than a class of two). Bounded, so a matched line stays far
# below the length at which the scanner cuts a line (``MAX_LINE_CHARS``) and reads it differently.
_GAP = rb" {1,200}+"
_LEAD = rb" {0,200}+"
# A time or bandwidth that float() reads as finite and not negative (nccl-tests prints %.2f and the like).
_NUMBER = rb"\d{1,30}+(?:\.\d{1,30}+)?+"
# #wrong as a count (``isdigit`` and at most 18 digits: read by int()) or not checked.
_WRONG = rb"(?:\d{1,18}+|N/A)"
# Columns no reader looks at (the old float 'error' such as 0e+00, per-iteration i_min .. i_cv%): a
# number in any notation, never with a ':', so no two of them can be taken for an -S timestamp.
_UNREAD = rb"(?:[0-9.eE+-]{1,40}+%?+|N/A)"
# An -S timestamp is split off before the columns are counted; its value matters only to kept rows.
_STAMP = rb"(?:" + _GAP + rb"\d{4}-\d\d-\d\d" + _GAP + rb"\d\d:\d\d:\d\d)?+"
_PARAMS = ("size", "count", "type", "redop", "root")


def _row_pattern(key: RowKey, layout: Layout) -> bytes | None:
    size, count, dtype, redop, root, _repeat = key
    values = {"size": str(size), "count": str(count), "type": dtype, "redop": redop, "root": str(root)}
    if len(set(layout.params)) != len(layout.params) or not set(layout.params) <= set(_PARAMS):
        return None  # a column the key does not hold: its text cannot be written as a literal
    literals = [re.escape(values[name].encode("utf-8")) for name in layout.params]
    if layout.placement_width < 4:
        return None
    wrong = _WRONG if layout.wrong_is_count else _UNREAD
    half = (_GAP + _NUMBER) * 3 + _GAP + wrong + (_GAP + _UNREAD) * (layout.placement_width - 4)
    return _LEAD + _GAP.join(literals) + half * 2 + _STAMP + _LEAD + rb"\r?\n"


def cycle_pattern(table: Table, variant: Variant, sizes: list[int]) -> CyclePattern | None:
    """The pattern of one whole cycle of ``variant``, once every size of it is full; None before then or
    when its rows cannot be told from its sizes alone (two keys of one size)."""
    cached = table.full_cycles.get(variant)
    if cached is not None:
        return cached
    by_size: dict[int, RowKey] = {}
    for key in table.rows:
        if (key[2], key[3], key[4]) == variant and key[0] in by_size:
            return None
        if (key[2], key[3], key[4]) == variant:
            by_size[key[0]] = key
    keys = [by_size.get(size) for size in sizes]
    if any(key is None or not table.rows[key].full for key in keys):
        return None
    rows = [_row_pattern(key, table.layout) for key in keys if key is not None]
    if any(row is None for row in rows):
        return None
    regex = re.compile(rb"(?:" + b"".join(row for row in rows if row is not None) + rb")*+")
    pattern = CyclePattern(regex, tuple(table.rows[key] for key in keys if key is not None))
    table.full_cycles[variant] = pattern
    return pattern


def skip_full_cycles(table: Table, data: bytes, begin: int, end: int, first_line: int) -> tuple[int, int]:
    """Whole cycles of a full sweep at ``data[begin:end]`` (whole lines), counted as the line-by-line
    reader would count them: (offset after them, lines they span); (begin, 0) when none match."""
    if table.discard or table.closed:
        return begin, 0
    for variant, sizes in table.order.at_cycle_start():
        pattern = cycle_pattern(table, variant, sizes)
        if pattern is None:
            continue
        match = pattern.regex.match(data, begin, end)
        if match is None or match.end() == begin:
            continue
        lines = data.count(b"\n", begin, match.end())
        whole = lines // pattern.lines
        for cycles in pattern.cycles:
            cycles.dropped += whole
        table.order.whole_cycles_passed(variant, first_line + lines - 1)
        return match.end(), lines
    return begin, 0
