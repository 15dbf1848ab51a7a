"""One ``RunResult`` as CSV: a row per size, both placements side by side (spread: the kept batches')."""

from __future__ import annotations

import csv
import io

from gpufabric.results.model import Measurement, RunResult

CSV_COLUMNS = (
    "collective",
    "nranks",
    "size_bytes",
    "count",
    "dtype",
    "redop",
    "root",
    "oop_time_us",
    "oop_algbw_gbs",
    "oop_busbw_gbs",
    "oop_wrong",
    "oop_spread",
    "ip_time_us",
    "ip_algbw_gbs",
    "ip_busbw_gbs",
    "ip_wrong",
    "ip_spread",
)


def _cells(m: Measurement | None) -> list[object]:
    if m is None:
        return ["", "", "", "", ""]
    spread = m.spread
    return [
        m.time_us,
        m.algbw_gbs,
        m.busbw_gbs,
        "" if m.wrong is None else m.wrong,
        "" if spread is None else round(spread, 6),
    ]


def render_csv(result: RunResult) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for series in result.series:
        for row in series.rows:
            writer.writerow(
                [
                    series.collective,
                    series.nranks,
                    row.size_bytes,
                    row.count,
                    row.dtype,
                    row.redop,
                    row.root,
                    *_cells(row.out_of_place),
                    *_cells(row.in_place),
                ]
            )
    return buffer.getvalue()
