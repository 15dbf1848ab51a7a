"""The columns of an nccl-tests table, read from its own header, and one data line turned into a ``Row``.

Columns have changed across nccl-tests versions, so the layout is taken from the header line rather than
assumed:

    classic   size count type redop root | time algbw busbw #wrong | time algbw busbw #wrong
    older     size count type redop      | time algbw busbw error  | time algbw busbw error
    -C 1      ... cputime instead of time
    -S        ... a trailing ``timestamp`` column (two tokens: date and time)
    per-iter  ... time algbw busbw #wrong i_min i_max i_p99 i_cv% (per placement)

``#wrong`` may be ``N/A`` (validation off); older ``error`` columns hold a float error, not a count, so
they read as "not counted". Trace-replay lines leave the out-of-place half blank: in-place only.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import datetime

from gpufabric.results.model import Measurement, Row

_TIME_NAMES = frozenset({"time", "cputime"})
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_CLOCK = re.compile(r"^\d{2}:\d{2}:\d{2}$")


@dataclass(frozen=True)
class Layout:
    """Where each field sits in a data line, derived from the header's column names."""

    params: tuple[str, ...]  # size count type redop [root]
    placement_width: int  # tokens per placement: time algbw busbw #wrong [i_min i_max i_p99 i_cv%]
    wrong_is_count: bool  # '#wrong' (a count) vs the old 'error' (a float error)
    has_timestamp: bool

    @property
    def full_width(self) -> int:
        return len(self.params) + 2 * self.placement_width


def layout_from_header(line: str) -> Layout | None:
    """``#  size count type redop root time algbw busbw #wrong time ...`` -> Layout; None if not a header."""
    if not line.startswith("#"):
        return None
    names = line.lstrip("#").split()
    if len(names) < 6 or names[0] != "size" or names[1] != "count":
        return None
    time_positions = [i for i, name in enumerate(names) if name in _TIME_NAMES]
    if not time_positions:
        return None
    first = time_positions[0]
    second = time_positions[1] if len(time_positions) > 1 else None
    end = len(names) - (1 if names[-1] == "timestamp" else 0)
    width = (second - first) if second is not None else end - first
    group = names[first : first + width]
    if group[:3] != [names[first], "algbw", "busbw"]:
        return None
    return Layout(
        params=tuple(names[:first]),
        placement_width=width,
        wrong_is_count="#wrong" in group,
        has_timestamp=names[-1] == "timestamp",
    )


def _number(token: str) -> float:
    value = float(token)
    if math.isnan(value) or math.isinf(value):
        return 0.0
    return value


def _measurement(tokens: list[str], layout: Layout) -> Measurement:
    time_us, algbw, busbw = (_number(t) for t in tokens[:3])
    wrong: int | None = None
    if len(tokens) > 3 and layout.wrong_is_count and tokens[3] != "N/A":
        wrong = int(float(tokens[3]))
    return Measurement(time_us=time_us, algbw_gbs=algbw, busbw_gbs=busbw, wrong=wrong)


def _split_timestamp(tokens: list[str]) -> tuple[list[str], datetime | None]:
    if len(tokens) >= 2 and _DATE.match(tokens[-2]) and _CLOCK.match(tokens[-1]):
        stamp = datetime.strptime(f"{tokens[-2]} {tokens[-1]}", "%Y-%m-%d %H:%M:%S")
        return tokens[:-2], stamp
    return tokens, None


def parse_data_line(line: str, layout: Layout) -> Row | None:
    """One table line -> Row; None when the line is not a complete data line of this layout."""
    tokens, stamp = _split_timestamp(line.split())
    nparams, width = len(layout.params), layout.placement_width
    if len(tokens) == layout.full_width:
        out_tokens: list[str] | None = tokens[nparams : nparams + width]
        in_tokens = tokens[nparams + width :]
    elif len(tokens) == nparams + width:  # trace replay: the out-of-place half is blank
        out_tokens, in_tokens = None, tokens[nparams:]
    else:
        return None
    fields = dict(zip(layout.params, tokens[:nparams], strict=True))
    try:
        size, count = int(fields["size"]), int(fields["count"])
        root = int(fields.get("root", "-1"))
        out_of_place = _measurement(out_tokens, layout) if out_tokens is not None else None
        in_place = _measurement(in_tokens, layout)
        return Row(
            size_bytes=size,
            count=count,
            dtype=fields.get("type", "unknown"),
            redop=fields.get("redop", "none"),
            root=root,
            out_of_place=out_of_place,
            in_place=in_place,
            timestamp=stamp,
        )
    except (ValueError, KeyError, OverflowError):  # "inf" wrong counts, out-of-range values: not a row
        return None


def looks_like_data_line(line: str) -> bool:
    """Cheap pre-check: a data line starts (after spaces) with two integers."""
    tokens = line.split(None, 2)
    return len(tokens) >= 2 and tokens[0].isdigit() and tokens[1].isdigit()
