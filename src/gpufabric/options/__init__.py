"""Each command's options, once: the field, type, default and meaning of every flag a command shares with
its request model (torchtitan's per-component config, as pydantic models).

``gpufabric.cli`` reads the defaults it prints in ``--help`` from here (``BENCH_DEFAULTS.dtype``); the
request models of ``gpufabric.jobs`` subclass these models and add what a job does with them; the
settings a rank reads (``bench.BenchConfig``, ``train.TrainConfig``) take the same defaults from here. A
default changes in one place. This package imports nothing from gpufabric but ``boundary_names`` (the
run roots): the CLI imports it to print its flags, so it must stay light, and every layer may import it.
``tests/test_facts_defined_once.py`` fails when a command module spells a default of its own.
"""

from gpufabric.options.bench import (
    AB_ROUNDS,
    BENCH_DEFAULTS,
    CPU_SWEEP,
    GPU_SWEEP,
    PLACEMENT_DEFAULTS,
    BenchOptions,
    PlacementOptions,
    SweepDefaults,
)
from gpufabric.options.isolate import (
    CERTIFY_DEFAULTS,
    ISOLATE_DEFAULTS,
    CertifyOptions,
    IsolateOptions,
)
from gpufabric.options.launch import LAUNCH_DEFAULTS, LaunchOptions
from gpufabric.options.train import AUTO_MODEL, TRAIN_DEFAULTS, TrainOptions
from gpufabric.options.tune import TUNE_DEFAULTS, TuneOptions

__all__ = [
    "AB_ROUNDS",
    "AUTO_MODEL",
    "BENCH_DEFAULTS",
    "CERTIFY_DEFAULTS",
    "CPU_SWEEP",
    "GPU_SWEEP",
    "ISOLATE_DEFAULTS",
    "LAUNCH_DEFAULTS",
    "PLACEMENT_DEFAULTS",
    "TRAIN_DEFAULTS",
    "TUNE_DEFAULTS",
    "BenchOptions",
    "CertifyOptions",
    "IsolateOptions",
    "LaunchOptions",
    "PlacementOptions",
    "SweepDefaults",
    "TrainOptions",
    "TuneOptions",
]
