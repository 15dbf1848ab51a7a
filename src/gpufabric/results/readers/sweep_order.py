"""The order in which one nccl-tests table prints its sizes, and what breaks it: two tables in one stream.

nccl-tests prints each dtype/op/root variant as one sweep of increasing sizes, repeated whole by ``-N``
run cycles (``src/common.cu``: the cycle loop is around the size loop). So within a variant a size that
is not larger than the one before it must be the sweep's first size starting the next cycle, and every
later cycle follows the first one size by size. Anything else means two tables are being printed into
one stream at the same time, e.g. two ranks of an mpirun without ``--tag-output``: their rows cannot be
told apart, and merging them would draw one plausible curve out of two runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

Variant = tuple[str, str, int]  # dtype, redop, root: each is a sweep of its own


@dataclass
class _Sweep:
    sizes: list[int]  # the first cycle as printed (a few dozen sizes at most)
    last_line: int
    cycle_known: bool = False  # True once the first size came round again (-N)
    position: int = 0  # index in ``sizes`` of the size the next row must have, once the cycle is known


@dataclass
class SweepOrder:
    """Checks each row of one table against the sweep order; ``add`` names the rows that break it."""

    _sweeps: dict[Variant, _Sweep] = field(default_factory=dict)

    def add(self, variant: Variant, size: int, line: int) -> int | None:
        """Record the row of ``size`` at ``line``; the line of the row before it when the two cannot be
        consecutive rows of one nccl-tests table, else None."""
        sweep = self._sweeps.get(variant)
        if sweep is None:
            self._sweeps[variant] = _Sweep([size], line)
            return None
        previous, sweep.last_line = sweep.last_line, line
        if not sweep.cycle_known:
            if size > sweep.sizes[-1]:
                sweep.sizes.append(size)
                return None
            if size != sweep.sizes[0]:
                return previous
            sweep.cycle_known = True
            sweep.position = 1 % len(sweep.sizes)
            return None
        if size != sweep.sizes[sweep.position]:
            return previous
        sweep.position = (sweep.position + 1) % len(sweep.sizes)
        return None

    def at_cycle_start(self) -> list[tuple[Variant, list[int]]]:
        """The variants whose next row must be the first size of a new -N cycle, with their sizes."""
        return [(v, s.sizes) for v, s in self._sweeps.items() if s.cycle_known and s.position == 0]

    def whole_cycles_passed(self, variant: Variant, last_line: int) -> None:
        """Whole cycles of ``variant`` were read in order (``line_scan`` and ``nccl_cycles`` checked them
        in bulk): as after ``add`` for each of their rows, the sweep is back at its first size."""
        self._sweeps[variant].last_line = last_line

    def repeated(self) -> bool:
        """Some variant came round again: the table holds -N run cycles."""
        return any(sweep.cycle_known for sweep in self._sweeps.values())
