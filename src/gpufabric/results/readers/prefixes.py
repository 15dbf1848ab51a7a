"""Launcher prefixes: take one raw log line apart into (who wrote it, what nccl-tests printed).

Every launcher wraps a rank's output differently, and several wrap each other (SkyPilot runs mpirun,
which tags its ranks). This module peels the wrappers off the front of a line, outermost first:

    ISO timestamp    ``2024-05-01T12:00:00.123Z ``            (kubectl --timestamps, journald, CI logs)
    SkyPilot         ``(head, rank=0, pid=3808) ``, ``(worker1, rank=1, pid=2769, ip=10.0.0.2) ``
    kubectl          ``[pod/nccl-test-0/main] ``                (kubectl logs --prefix)
    mpirun           ``[1,0]<stdout>:``                         (mpirun --tag-output)
    Slurm            ``0: ``                                   (srun --label)
    rank in brackets ``[0] ``, ``[default3]:``                (Intel MPI -prepend-rank, torchrun --tee)
    pasted text      ``+`` of a diff, ``> `` of a quoted reply  (issue threads, review comments)

A tag glued inside a line (two ranks' output interleaved mid-line: ``... -1[1,0]<stdout>:  12.3 ...``)
is cut out of it, so the row it interrupted reads whole.

ANSI colour codes and the CR of CRLF are removed everywhere. What remains is the line nccl-tests wrote,
with its own leading spaces intact. The tags become a ``Source``: which rank wrote the line, so that
the table reader can keep the streams of several ranks apart and let rank 0's table win.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpufabric.mpirun_tag import MPIRUN_TAG

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07")
_TIMESTAMP = re.compile(
    r"^\[?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?\]?\s+"
)
_SKYPILOT = re.compile(r"^\((?P<node>[\w.-]+), rank=(?P<rank>\d{1,9}), pid=\d+(?:, ip=[0-9a-fA-F.:]+)?\)\s?")
_KUBECTL = re.compile(r"^\[pod/(?P<pod>[^/\]\s]+)/(?P<container>[^\]\s]+)\]\s?")
_SLURM = re.compile(r"^\s{0,6}(?P<rank>\d{1,6}): ")
_BRACKET_RANK = re.compile(r"^\[(?:default)?(?P<rank>\d{1,6})\]:?\s?")
_PASTED = re.compile(r"^(?:\+|>)(?=[ \t#\d]|$)\s?")
_TRAILING_INDEX = re.compile(r"(\d+)$")


@dataclass(frozen=True, order=True)
class Source:
    """Who wrote a line: the rank tags found on it, outermost launcher first (empty when untagged)."""

    tags: tuple[tuple[str, int], ...] = ()

    @property
    def rank_order(self) -> tuple[int, ...]:
        """Sort key that puts rank 0 of the innermost launcher first, then the outer ranks."""
        return tuple(rank for _, rank in reversed(self.tags))

    def describe(self) -> str:
        return ", ".join(f"{kind} rank {rank}" for kind, rank in self.tags) or "untagged output"


UNTAGGED = Source()


def clean(raw: str) -> str:
    """Remove the line ending (LF, CRLF, stray CR) and ANSI colour codes."""
    line = raw.rstrip("\r\n")
    if "\r" in line:  # progress bars rewrite the line with CR; the last segment is what stayed on screen
        line = line.rsplit("\r", 1)[-1] or line.replace("\r", "")
    if "\x1b" in line:
        line = _ANSI.sub("", line)
    return line


def _indented_tag(line: str) -> bool:
    return bool(MPIRUN_TAG.match(line) or _SKYPILOT.match(line) or _KUBECTL.match(line))


def split_prefixes(raw: str) -> tuple[Source, str]:
    """``"(head, rank=0, pid=1) [1,0]<stdout>:  1024"`` -> (Source(skypilot 0, mpirun 0), ``"  1024"``)."""
    line = clean(raw)
    tags: list[tuple[str, int]] = []
    if line[:1] in " \t" and (indented := line.lstrip(" \t"))[:1] in "[(" and _indented_tag(indented):
        line = indented  # a tagged log pasted indented (quoted in an issue, nested in a code block)
    while line:
        first = line[0]
        # Dispatch on the first character: most lines carry no prefix and must cost one comparison.
        if first == "(" and (match := _SKYPILOT.match(line)):
            tags.append(("skypilot", int(match["rank"])))
        elif first == "[" and (match := MPIRUN_TAG.match(line)):
            tags.append(("mpirun", int(match["rank"])))
        elif first == "[" and (match := _KUBECTL.match(line)):
            index = _TRAILING_INDEX.search(match["pod"][-9:])  # a pod name's index, never 5,000 digits
            tags.append(("pod", int(index.group(1)) if index else 0))
        elif first == "[" and (match := _BRACKET_RANK.match(line)):
            tags.append(("rank", int(match["rank"])))
        elif (first in "+>" and not tags and (match := _PASTED.match(line))) or (
            (first.isdigit() or first == "[") and (match := _TIMESTAMP.match(line))
        ):
            pass
        elif (first.isdigit() or first == " ") and not tags and (match := _SLURM.match(line)):
            # srun --label is the outermost wrapper when present; deeper "N: " text is the program's own.
            tags.append(("slurm", int(match["rank"])))
        else:
            break
        line = line[match.end() :]
    if "]<std" in line:
        line = MPIRUN_TAG.sub("", line)
    return Source(tuple(tags)), line
