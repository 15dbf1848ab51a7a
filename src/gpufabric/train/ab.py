"""The training A/B: the same benchmark with the fabric on, then off (the ``planner.ab_profiles`` that
``bench --ab`` uses), and what its document may claim.

``side_config`` is one side's ``TrainConfig`` (its own run directory under the A/B's root, the profile's
variables to remove on the rank); ``ab_document`` joins the two sides' ``TrainResult``s into a ``TrainAB``.
``ab_caveat`` and ``fabric_label`` say what an A/B of two gloo runs cannot claim. Running the sides is
``gpufabric.jobs.train``'s; rendering is ``gpufabric.report.train_render``'s.
"""

from __future__ import annotations

from pathlib import Path

from gpufabric.planner.ab import ABProfiles, FabricProfile
from gpufabric.train.config import TrainConfig
from gpufabric.train.result import TrainAB, TrainResult

AB_DOCUMENT_NAME = "train-ab.json"
"""The A/B document, in the A/B's root run directory (each side's ``train.json`` is in ``<root>/<side>``)."""
GLOO_FABRIC = "no fabric: CPU gloo on both arms"


def side_config(config: TrainConfig, side: FabricProfile, *, root: Path, first: bool) -> TrainConfig:
    """``config`` for one side: run directory ``<root>/<side>``, the profile's name in the label, its
    removals applied on the rank (so they hold under every launcher). The 1-rank baseline is timed on the
    first side only: the fabric cannot change one rank."""
    return config.model_copy(
        update={
            "run_dir": root / side.name,
            "label": f"{config.label} {side.name}",
            "profile": side.name,
            "unset_env": list(side.unset),
            "scaling": config.scaling and first,
        }
    )


def ab_document(profiles: ABProfiles, on: TrainResult, off: TrainResult) -> TrainAB:
    """The two sides as one document; the off side's scaling is read against the on side's baseline."""
    if off.scaling is None and on.scaling is not None:
        base = on.scaling.baseline_samples_per_s
        off.scaling = on.scaling.model_copy(
            update={"efficiency": off.samples_per_s / (off.world_size * base)}
        )
    document = TrainAB(
        fabric=profiles.fabric,
        on=on,
        off=off,
        on_description=profiles.on.description,
        off_description=profiles.off.description,
        off_env=dict(profiles.off.env),
        off_unset=list(profiles.off.unset),
    )
    # Both arms on gloo: the profiles' NCCL variables switched nothing, so the document names no fabric.
    document.fabric = fabric_label(document)
    return document


def ab_caveat(document: TrainAB) -> str | None:
    """The warning an A/B of two CPU gloo runs needs: gloo talks TCP whatever the fabric profile says."""
    if not all(run.metadata.backend == "gloo" for run in (document.on, document.off)):
        return None
    return (
        "caveat: both arms ran on CPU ranks with gloo, which ignores the fabric settings (NCCL_* variables); "
        "this A/B compares two CPU gloo runs, so its speed-up is run-to-run noise and says nothing about "
        "the fabric; run it on GPU ranks (nccl) to measure the fabric"
    )


def fabric_label(document: TrainAB) -> str:
    """The fabric the A/B measured: none where both arms ran gloo (older documents still say the profile)."""
    return GLOO_FABRIC if ab_caveat(document) else document.fabric
