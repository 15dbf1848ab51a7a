"""The training benchmark's result documents: ``TrainResult`` (one run) and ``TrainAB`` (fabric on vs off).

Same family as ``RunResult``: versioned (``schema_version``), a ``kind`` that tells the documents apart,
and the same ``RunMetadata`` (hosts, devices, versions, redacted env, NCCL log files). Times are
milliseconds per step; bandwidths GB/s with GB = 1e9 bytes, as everywhere in gpufabric.
The rank side writes ``<run_dir>/train.json``; ``run_train_run`` adds the prediction and rewrites it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError

from gpufabric.errors import InputError
from gpufabric.results.attestation import Attestation
from gpufabric.results.io import sniff_json, write_model_json
from gpufabric.results.model import RunMetadata
from gpufabric.results.readers.train_document import is_train_document
from gpufabric.train.config import ModelSpec, Strategy
from gpufabric.train.exposed import ExposedSamples, centre_ms
from gpufabric.train.measures import CollectiveCall as CollectiveCall  # re-exported: the parts
from gpufabric.train.measures import CollectiveKind, ExposedFrom
from gpufabric.train.measures import CommPayload as CommPayload
from gpufabric.train.measures import PhaseSplit as PhaseSplit
from gpufabric.train.measures import Prediction as Prediction
from gpufabric.train.measures import Scaling as Scaling
from gpufabric.train.measures import StepTimes as StepTimes
from gpufabric.train.part import TrainPart
from gpufabric.train.peaks import PeakFlops
from gpufabric.train.probe_measures import Contention as Contention
from gpufabric.train.probe_measures import HostPath as HostPath
from gpufabric.train.probe_measures import InsideStep as InsideStep
from gpufabric.train.step_order import StepOrder, first_of_each_block

TRAIN_SCHEMA_VERSION = 1


class TrainResult(TrainPart):
    """One training benchmark run."""

    schema_version: int = TRAIN_SCHEMA_VERSION
    kind: Literal["train"] = "train"
    label: str
    complete: bool = True
    failure: str | None = None
    profile: str | None = Field(default=None, description="fabric-on / fabric-off in an A/B run")
    metadata: RunMetadata = Field(default_factory=RunMetadata)
    model_name: str
    model: ModelSpec
    parameters: int
    strategy: Strategy
    dtype: str
    world_size: int
    batch_size: int = Field(description="samples per rank per step")
    step: StepTimes = Field(description="full steps: forward, backward with gradient sync, optimizer")
    compute: StepTimes = Field(description="the same steps without gradient communication")
    step_order: StepOrder = Field(
        default="sequential",
        description="how the two were run back to back: 'interleaved' (blocks in ABBA order) or "
        "'sequential' (every synced step, then every twin step: documents before 2026-11-28 05:30 UTC)",
    )
    block_lead_in: bool = Field(
        default=False,
        description="interleaved: each block led in by one untimed step (train.step_order); False in the "
        "documents of 2026-11-28 05:30-06:05 UTC, whose exposed reading leaves each block's first step out",
    )
    compute_each_slowest: StepTimes | None = Field(
        default=None,
        description="the same twin steps, each the slowest rank's for that step (``compute`` is the rank "
        "slowest over all its steps): a synced step waits for every rank at its calls, so where ranks' "
        "hosts are disturbed at different moments it pays this per-step maximum; older documents: None",
    )
    compute_method: str
    comm: CommPayload
    prediction: Prediction | None = None
    scaling: Scaling | None = None
    phases: PhaseSplit | None = None
    peak: PeakFlops | None = Field(default=None, description="the GPU's dense bf16 peak (MFU's denominator)")
    attestation: Attestation | None = Field(
        default=None, description="what this run's NCCL logs say it used; None without NCCL logs (gloo)"
    )

    @property
    def global_batch(self) -> int:
        return self.batch_size * self.world_size

    @property
    def samples_per_s(self) -> float:
        return self.global_batch / (self.step.mean_ms / 1e3)

    @property
    def tokens_per_s(self) -> float:
        return self.samples_per_s * self.model.seq_len

    @property
    def exposed_from(self) -> ExposedFrom:
        """Which steps exposed communication is read from. DDP's twin runs the same optimizer as its synced
        step, so the steps back to back, as training runs them, differ by the communication alone. FSDP's
        twin updates the whole model where the synced step updates its shard, so the difference is read at
        the end of backward, in the split (``phases``), whose steps each start settled
        (``timing.time_phased_steps``). DDP documents whose steps ran in ``sequential`` order keep the split
        too: every synced step before every twin step lets drift land on one side (``train.step_order``).
        Documents without the split: the steps back to back."""
        if self.phases is None:
            return "steps back to back"
        interleaved_ddp = self.strategy == "ddp" and self.step_order == "interleaved"
        return "steps back to back" if interleaved_ddp else "split"

    def exposed_samples(self) -> ExposedSamples:
        """The per-step times whose difference is the exposed communication, and how it is read: the
        medians of the steps back to back (``exposed_from``; ``train.exposed`` says why), the means of the
        split's ends of backward."""
        if self.exposed_from == "split" and self.phases is not None:
            return ExposedSamples(
                self.phases.synced_backward.samples_ms, self.phases.compute_backward.samples_ms
            )
        synced, twin = self.step.samples_ms, self.compute.samples_ms
        if self.step_order == "sequential":
            return ExposedSamples(synced, twin, "mean")
        block = self.metadata.settings.get("block")
        if not self.block_lead_in and isinstance(block, int) and block > 0 and len(synced) == len(twin):
            # No lead-in yet: each block's first step is the one a lead-in leaves untimed (train.step_order).
            firsts = first_of_each_block(len(synced), block)
            synced = [t for i, t in enumerate(synced) if i not in firsts[0]]
            twin = [t for i, t in enumerate(twin) if i not in firsts[1]]
        return ExposedSamples(synced, twin, "median")

    @property
    def rank_wait_ms(self) -> float | None:
        """What waiting for every rank's step adds over the slowest rank's own steps, by the exposed
        reading's centre: median (or mean) of ``compute_each_slowest`` minus the same of ``compute``; never
        below 0 (each step's maximum is at least that rank's step). Near 0 where the ranks' steps keep
        time; where they are slowed at different moments (a neighbour on the GPUs, a disturbed host), a
        synced step pays it and the twin does not: a term of the prediction where the reading is the
        steps back to back (``predict``; docs/train-bench.md findings 38-39)."""
        if self.compute_each_slowest is None or not self.compute.samples_ms:
            return None
        reading = self.exposed_samples().reading
        return centre_ms(self.compute_each_slowest.samples_ms, reading) - centre_ms(
            self.compute.samples_ms, reading
        )

    @property
    def comm_ms(self) -> float:
        """Exposed communication per step: what the step pays beyond its compute (``exposed_from``)."""
        return max(0.0, self.exposed_samples().difference_ms() or 0.0)

    @property
    def tokens_per_step(self) -> int:
        return self.global_batch * self.model.seq_len

    @property
    def mfu(self) -> float | None:
        """Model FLOPs utilisation: achieved training FLOP/s per GPU / the GPU's dense bf16 peak."""
        if self.peak is None or self.peak.tflops is None:
            return None
        per_gpu = self.tokens_per_s / self.world_size * self.model.flops_per_token()
        return per_gpu / (self.peak.tflops * 1e12)


class ABRoundRun(TrainPart):
    """One job of a training A/B: its round and side, where it ran, what it measured."""

    round: int
    side: str
    run_dir: str
    tokens_per_s: float
    step_ms: float
    exposed_comm_ms: float


class BusbwSpeedup(TrainPart):
    """busbw of one of the step's collectives at its own size, each side's probe (median over rounds)."""

    kind: CollectiveKind
    size_bytes: int
    on_gbs: float
    off_gbs: float

    @property
    def speedup(self) -> float:
        return self.on_gbs / self.off_gbs if self.off_gbs > 0 else 0.0


class TrainAB(TrainPart):
    """The same training benchmark with the fabric on and off (profiles of ``planner.ab_profiles``), in
    ABBA rounds; ``on``/``off`` are each side's first run, ``jobs`` every run in the order it ran."""

    schema_version: int = TRAIN_SCHEMA_VERSION
    kind: Literal["train-ab"] = "train-ab"
    fabric: str
    on: TrainResult
    off: TrainResult
    on_description: str = ""
    off_description: str = ""
    off_env: dict[str, str] = Field(default_factory=dict)
    off_unset: list[str] = Field(default_factory=list)
    rounds: int = 1
    jobs: list[ABRoundRun] = Field(default_factory=list)
    pooled_speedup: float | None = Field(
        default=None, description="mean step time off / on over every round's steps (= tokens/s on / off)"
    )
    speedup_low: float | None = Field(default=None, description="95% bootstrap interval, as bench --ab's")
    speedup_high: float | None = None
    busbw: list[BusbwSpeedup] = Field(default_factory=list)

    @property
    def speedup(self) -> float:
        """tokens/s with the fabric on / off: every round pooled, else the two runs (older documents)."""
        if self.pooled_speedup is not None:
            return self.pooled_speedup
        return self.on.samples_per_s / self.off.samples_per_s


TrainDocument = TrainResult | TrainAB


def write_train_document(document: TrainDocument, path: Path) -> None:
    """Atomic write (temp file + rename), as ``results.io.write_result``."""
    write_model_json(document, path)


def sniff_train_document(path: Path) -> TrainDocument | None:
    """The training document in ``path`` if it is one (``.json`` with ``kind`` train/train-ab), else None.

    Lets ``gpufabric report`` take benchmark runs and training runs in one argument list; only small JSON
    files are parsed here, anything else is left to the benchmark readers.
    """
    return read_train_document(path) if is_train_document(sniff_json(path, None)) else None


def read_train_document(path: Path) -> TrainDocument:
    """Read a ``train.json`` (one run) or an A/B document; one-line ``InputError`` otherwise."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:
        raise InputError(f"{path}: not a readable gpufabric training result ({exc})") from exc
    if not is_train_document(data):
        raise InputError(f'{path}: not a training result (expected "kind": "train" or "train-ab")')
    try:
        if data["kind"] == "train-ab":
            return TrainAB.model_validate(data)
        return TrainResult.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        raise InputError(f"{path}: invalid training result at {where}: {first['msg']}") from exc
