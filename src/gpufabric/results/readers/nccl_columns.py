"""The columns of an nccl-tests table, read from its own header, and one data line turned into a ``Row``.

Columns have changed across nccl-tests versions, so the layout is taken from the header line rather than
assumed:

    classic   size count type redop root | time algbw busbw #wrong | time algbw busbw #wrong
    older     size count type redop      | time algbw busbw error  | time algbw busbw error
    -C 1      ... cputime instead of time
    -S        ... a trailing ``timestamp`` column (two tokens: date and time)
    per-iter  ... time algbw busbw #wrong i_min i_max i_p99 i_cv% (per placement)

``#wrong`` may be ``N/A`` (validation off); older ``error`` columns hold a float error, not a count, so
they read as "not counted". Trace-replay lines leave the out-of-place half blank: in-place only, and
gpufabric's own tables print a half it did not measure as ``N/A`` in every column.

NCCL 1's own test programs (``all_reduce_test``, before nccl-tests) named the columns ``bytes N type op
[root] time algbw busbw res`` and printed the time in milliseconds; they are read as ``size count type
redop [root]`` with the time converted to microseconds.

Rows pasted without any header get their layout from the row itself (``layout_from_row``): the token
count and which tokens are words decide where each column sits.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple

from gpufabric.results.model import Measurement, Row

_TIME_NAMES = frozenset({"time", "cputime"})
_OLD_NAMES = {"bytes": "size", "N": "count", "op": "redop", "res": "error"}  # nccl-tests 1.x header
_NOT_MEASURED = "N/A"
_INF = math.inf
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_CLOCK = re.compile(r"^\d{2}:\d{2}:\d{2}$")


@dataclass(frozen=True)
class Layout:
    """Where each field sits in a data line, derived from the header's column names."""

    params: tuple[str, ...]  # size count type redop [root]
    placement_width: int  # tokens per placement: time algbw busbw #wrong [i_min i_max i_p99 i_cv%]
    wrong_is_count: bool  # '#wrong' (a count) vs the old 'error' (a float error)
    has_timestamp: bool
    time_scale: float = 1.0  # to microseconds: 1000 for NCCL 1's tests, which print milliseconds

    @property
    def full_width(self) -> int:
        return len(self.params) + 2 * self.placement_width


def layout_from_header(line: str) -> Layout | None:
    """``#  size count type redop root time algbw busbw #wrong time ...`` -> Layout; None if not a header."""
    if not line.startswith("#"):
        return None
    printed = line.lstrip("#").split()
    names = [_OLD_NAMES.get(name, name) for name in printed]
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
        time_scale=1000.0 if printed[:1] == ["bytes"] else 1.0,
    )


Half = tuple[float, float, float, int | None]  # time_us, algbw, busbw, #wrong (None: not checked)


class TextRow(NamedTuple):
    """One data line, parsed but not yet a pydantic ``Row``: a big log's -N cycles cost a tuple each,
    and only the rows that end up in the result pay for validation (``to_row``)."""

    size: int
    elements: int  # the count column (``count`` would shadow tuple.count)
    dtype: str
    redop: str
    root: int
    out_of_place: Half | None
    in_place: Half | None
    timestamp: datetime | None

    @property
    def key(self) -> tuple[int, int, str, str, int]:
        return (self.size, self.elements, self.dtype, self.redop, self.root)

    def to_row(self, samples: tuple[list[float], list[float]] | None = None, iters: int | None = None) -> Row:
        def measurement(half: Half | None, times: list[float] | None) -> Measurement | None:
            if half is None:
                return None
            return Measurement(
                time_us=half[0],
                algbw_gbs=half[1],
                busbw_gbs=half[2],
                wrong=half[3],
                samples_us=times or [],
                iters_per_batch=iters if times else None,
            )

        oop_times, ip_times = samples if samples is not None else (None, None)
        return Row(
            size_bytes=self.size,
            count=self.elements,
            dtype=self.dtype,
            redop=self.redop,
            root=self.root,
            out_of_place=measurement(self.out_of_place, oop_times),
            in_place=measurement(self.in_place, ip_times),
            timestamp=self.timestamp,
        )


def _number(token: str) -> float:
    value = float(token)
    if math.isnan(value) or math.isinf(value):
        return 0.0
    if value < 0:  # a time or bandwidth below zero is corruption (the model refuses it): not a row
        raise ValueError(token)
    return value


def _half(tokens: list[str], layout: Layout) -> Half | None:
    if tokens[0] == _NOT_MEASURED:  # a placement gpufabric did not measure (torch has no out-of-place form)
        return None
    # The common case inline (this runs for every row of a big log); nan, inf and negatives take _number.
    time_us, algbw, busbw = float(tokens[0]), float(tokens[1]), float(tokens[2])
    if not (0.0 <= time_us < _INF and 0.0 <= algbw < _INF and 0.0 <= busbw < _INF):
        time_us, algbw, busbw = _number(tokens[0]), _number(tokens[1]), _number(tokens[2])
    wrong: int | None = None
    if len(tokens) > 3 and layout.wrong_is_count and tokens[3] != _NOT_MEASURED:
        token = tokens[3]
        wrong = int(token) if token.isdigit() and len(token) <= 18 else int(_number(token))
    return (time_us * layout.time_scale, algbw, busbw, wrong)


def _split_timestamp(tokens: list[str]) -> tuple[list[str], datetime | None]:
    if len(tokens) >= 2 and _DATE.match(tokens[-2]) and _CLOCK.match(tokens[-1]):
        try:
            stamp = datetime.strptime(f"{tokens[-2]} {tokens[-1]}", "%Y-%m-%d %H:%M:%S")
        except ValueError:  # 2024-13-45 99:99:99: the shape of a timestamp, not a time; the row still counts
            stamp = None
        return tokens[:-2], stamp
    return tokens, None


def _integer(token: str) -> int:
    """An integer column; more digits than any size, count or root can have is not a number here (and
    Python refuses to convert over 4,300 digits anyway)."""
    if len(token) > 20:
        raise ValueError(token)
    return int(token)


def parse_data_line(line: str, layout: Layout) -> TextRow | None:
    """One table line -> TextRow; None when the line is not a complete data line of this layout."""
    tokens, stamp = _split_timestamp(line.split())
    params = layout.params
    if "redop" in params and len(tokens) in (layout.full_width - 1, len(params) - 1 + layout.placement_width):
        # Older nccl-tests print an empty redop for collectives without one (alltoall, all_gather:
        # NVIDIA/nccl#644, microsoft/msccl#48): the header names the column, the row leaves it blank.
        redop_at = params.index("redop")
        if redop_at < len(tokens) and _is_number(tokens[redop_at]):
            params = params[:redop_at] + params[redop_at + 1 :]
    nparams, width = len(params), layout.placement_width
    if len(tokens) == nparams + 2 * width:
        out_tokens: list[str] | None = tokens[nparams : nparams + width]
        in_tokens = tokens[nparams + width :]
    elif len(tokens) == nparams + width:  # trace replay: the out-of-place half is blank
        out_tokens, in_tokens = None, tokens[nparams:]
    else:
        return None
    fields = dict(zip(params, tokens[:nparams], strict=True))
    try:
        size, count = _integer(fields["size"]), _integer(fields["count"])
        root = _integer(fields.get("root", "-1"))
        if size < 0 or count < 0 or root < -1:
            return None
        return TextRow(
            size=size,
            elements=count,
            dtype=fields.get("type", "unknown"),
            redop=fields.get("redop", "none"),
            root=root,
            out_of_place=_half(out_tokens, layout) if out_tokens is not None else None,
            in_place=_half(in_tokens, layout),
            timestamp=stamp,
        )
    except (ValueError, KeyError, OverflowError):  # "inf" wrong counts, out-of-range values: not a row
        return None


_REDOPS = frozenset({"sum", "prod", "max", "min", "avg", "none", "mulsum", "premulsum"})


def _is_number(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


def layout_from_row(line: str) -> Layout | None:
    """The layout of a data line pasted without its column header, from its shape alone; None when no
    nccl-tests layout fits. ``size count type`` come first; a word after the type is the redop; what is
    left splits into two placements of 4 (classic) or 8 (per-iteration) columns, one placement when it
    is in-place only, and the root column is there when the split needs it."""
    tokens, stamp = _split_timestamp(line.split())
    if len(tokens) < 7 or not tokens[0].isdigit() or not tokens[1].isdigit() or _is_number(tokens[2]):
        return None
    params = ["size", "count", "type"]
    if tokens[3].lower() in _REDOPS or not _is_number(tokens[3]):
        params.append("redop")
    rest = len(tokens) - len(params)
    root_fits = tokens[len(params)].lstrip("-").isdigit()
    width = next(
        (
            (root, w)
            for root in ((True, False) if root_fits else (False,))
            for w in (4, 8)
            if (rest - root) in (w, 2 * w)
        ),
        None,
    )
    if width is None:
        return None
    with_root, placement_width = width
    if with_root:
        params.append("root")
    wrong = tokens[len(params) + 3] if len(tokens) > len(params) + 3 else "0"
    return Layout(
        params=tuple(params),
        placement_width=placement_width,
        wrong_is_count=wrong == _NOT_MEASURED or wrong.isdigit(),
        has_timestamp=stamp is not None,
    )


def looks_like_data_line(line: str) -> bool:
    """Cheap pre-check: a data line starts (after spaces) with two integers."""
    tokens = line.split(None, 2)
    return len(tokens) >= 2 and tokens[0].isdigit() and tokens[1].isdigit()
