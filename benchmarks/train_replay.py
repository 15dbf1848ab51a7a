"""Replay a train-bench document's measured terms through today's prediction (issue 37).

    python3 benchmarks/train_replay.py RESULT.json [RESULT.json ...]

A document (``train-bench --out``, or a run folder's ``train.json``) keeps every term the prediction
reads: the step's calls and their probe times, the forward/backward split, the contention, host-path and
inside-step probes. This prints, per document, the prediction recorded when it ran and the one
``gpufabric.train.predict`` makes from the same terms now, term by term (free overlap, what contention
adds at the probe's rates, the host-path bound), beside the measured exposed time with its 95% interval
and the rule's verdict (``train.resolution``). A change to the model is read against recorded runs so,
without a GPU; a change to a probe is not (its terms were measured the old way) and the line says
where the probe started. An ``--ab`` document is replayed side by side.
"""

from __future__ import annotations

import sys
from pathlib import Path

from gpufabric.train import TrainAB, TrainResult, read_train_document
from gpufabric.train.predict import predict
from gpufabric.train.resolution import measured_text, steps_to_resolve, target_status
from gpufabric.train.verdict import overlap_rates_text


def replay_line(name: str, result: TrainResult) -> str:
    recorded, now = result.prediction, predict(result)
    if now is None:
        return f"{name}: nothing to predict (one rank or no calls)"
    probe = result.comm.contention
    probe_text = (
        f"contention probe from {probe.starts_at:.2f} of backward: compute {probe.compute_rate:.0%}, "
        f"collectives {probe.comm_rate:.0%}"
        if probe is not None
        else "no contention probe"
    )
    if probe is not None and probe.scheduled is not None:  # DDP runs from 2026-11-27 20:18 on
        probe_text += (
            f"; scheduled: backward {probe.scheduled_compute_lost_ms:+.2f} ms, tail "
            f"{probe.scheduled_tail_ms:.2f} ms"
        )
        if probe.scheduled.backward_solo_ms is not None:  # from commit 5aedfea (2026-11-27 23:10) on
            probe_text += (
                " (against the same hooks issuing on each rank's own group: "
                f"{probe.scheduled.backward_solo_ms:.2f} ms, with none {probe.backward_alone_ms:.2f})"
            )
        if probe.scheduled.issue_host_ms is not None:
            how = "gated" if probe.gated else "from Python"
            probe_text += (
                f", hooks' host time at the issue points {probe.scheduled.issue_host_ms:.2f} ms ({how})"
            )
    seen = probe.seen_by_waited_for() if probe is not None else None
    if seen is not None:  # one rank computing while the others wait at the calls (from 2026-11-28 on)
        probe_text += (
            f"; the rank waited for: compute {seen.compute_rate:.0%}, collectives {seen.comm_rate:.0%}"
        )
    if probe is not None:
        probe_text += f"; the model took {overlap_rates_text(now, probe)}"
    # The overlap model without contention: what the prediction's communication bound is less the term
    # contention adds (both computed by predict; without recorded phases there is no overlap to play).
    has_overlap = result.phases is not None and now.comm_exposed_ms is not None
    free = f"{(now.comm_exposed_ms or 0.0) - now.contention_ms:.2f}" if has_overlap else "-"
    host = f"{now.host_bound_ms:.2f}" if now.host_bound_ms is not None else "-"
    then = f"{recorded.predicted_comm_ms:.2f}" if recorded is not None else "-"
    needed = steps_to_resolve(now, result.exposed_samples())
    inside = (
        f"; inside the step: blocks +{now.compute_slowed_ms:.2f} ms, between blocks "
        f"+{now.between_blocks_ms:.2f} ms"
        if now.compute_slowed_ms is not None and now.between_blocks_ms is not None
        else ""
    )
    wait = result.rank_wait_ms
    waits = f" + waiting for ranks {now.rank_wait_ms:.2f}" if now.rank_wait_ms is not None else ""
    modelled = "in the model" if now.rank_wait_ms is not None else "not in the model: the split's twin"
    inside += f"; waiting for every rank's step: +{wait:.2f} ms ({modelled})" if wait is not None else ""
    return (
        f"{name}: {result.model_name} {result.strategy} x{result.world_size}: measured {measured_text(now)}; "
        f"predicted then {then}, now {now.predicted_comm_ms:.2f} ms = wire {now.wire_ms:.2f} -> free overlap "
        f"{free} + contention {now.contention_ms:.2f}{waits} (host-path bound "
        f"{host}; {probe_text}): {now.agreement_pct:.0f}% {target_status(now)}"
        f"{f', ~{needed} steps a side to judge it' if needed else ''}{inside}"
    )


def main(paths: list[Path]) -> int:
    for path in paths:
        document = read_train_document(path)
        if isinstance(document, TrainAB):
            print(replay_line(f"{path} (--ab on)", document.on))
            print(replay_line(f"{path} (--ab off)", document.off))
        elif isinstance(document, TrainResult):
            print(replay_line(str(path), document))
    return 0


if __name__ == "__main__":
    sys.exit(main([Path(a) for a in sys.argv[1:]]))
