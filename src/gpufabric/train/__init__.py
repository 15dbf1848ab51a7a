"""The training benchmark: a small transformer LM trained data-parallel (DDP or FSDP) on synthetic data.

Public API: ``TrainConfig`` / ``model_spec`` (what to run), ``run_train_bench`` and ``run_train_ab`` (run it
through a launcher, fabric on and off), ``TrainResult`` / ``TrainAB`` (the documents) and
``read_train_document``, ``predict`` (busbw -> communication time). The rank side is
``python -m gpufabric.train.rank``; torch is imported only there and in the modules it uses.
"""

from gpufabric.train.config import MODEL_PRESETS, ModelSpec, TrainConfig, model_spec
from gpufabric.train.predict import busbw_at, predict, read_busbw_table
from gpufabric.train.result import TrainAB, TrainResult, read_train_document, write_train_document
from gpufabric.train.runner import run_train_ab, run_train_bench

__all__ = [
    "MODEL_PRESETS",
    "ModelSpec",
    "TrainAB",
    "TrainConfig",
    "TrainResult",
    "busbw_at",
    "model_spec",
    "predict",
    "read_busbw_table",
    "read_train_document",
    "run_train_ab",
    "run_train_bench",
    "write_train_document",
]
