"""The training benchmark: a GPT-style LM (``gpt-760m`` on GPUs, ``tiny`` on CPU; ``model_shape``) trained
data-parallel (DDP or FSDP2) on synthetic data.

Public API: ``TrainConfig`` / ``model_spec`` (what every rank runs), ``prepare_train_run`` and
``run_train_run`` (one run through a launcher: plan, then execute), ``ab_document`` and ``ab_caveat``
(the fabric A/B), ``TrainResult`` / ``TrainAB`` (the documents) and ``read_train_document``, ``predict``
(busbw -> exposed communication, through ``schedule``'s overlap model). ``gpufabric.jobs.train`` is
the mode built on them (``TrainRequest``);
rendering is ``gpufabric.report.train_render``'s. The rank side is ``python -m gpufabric.train.rank``;
torch is imported only there and in the modules it uses.
"""

from typing import TYPE_CHECKING

from gpufabric._lazy import lazy_package

if TYPE_CHECKING:  # the public names, each imported on first use (gpufabric._lazy)
    from gpufabric.train.ab import GLOO_FABRIC, ab_caveat, ab_document, fabric_label
    from gpufabric.train.config import MODEL_PRESETS, STRATEGIES, ModelSpec, TrainConfig, model_spec
    from gpufabric.train.model_shape import AUTO_MODEL, CPU_DEFAULT_MODEL, GPU_DEFAULT_MODEL
    from gpufabric.train.predict import busbw_at, predict, read_busbw_table
    from gpufabric.train.result import (
        TrainAB,
        TrainDocument,
        TrainResult,
        read_train_document,
        write_train_document,
    )
    from gpufabric.train.runner import PreparedTrainRun, prepare_train_run, run_train_run
lazy_package(__name__)

__all__ = [
    "AUTO_MODEL",
    "CPU_DEFAULT_MODEL",
    "GLOO_FABRIC",
    "GPU_DEFAULT_MODEL",
    "MODEL_PRESETS",
    "STRATEGIES",
    "ModelSpec",
    "PreparedTrainRun",
    "TrainAB",
    "TrainConfig",
    "TrainDocument",
    "TrainResult",
    "ab_caveat",
    "ab_document",
    "busbw_at",
    "fabric_label",
    "model_spec",
    "predict",
    "prepare_train_run",
    "read_busbw_table",
    "read_train_document",
    "run_train_run",
    "write_train_document",
]
