"""The torch.distributed engine: the rank program for gloo on CPU, other backends (hccl, xccl) and NCCL
through torch, where the direct NCCL engine (``engines.nccl``) is not installed or not asked for.

* ``data``: exact inputs and expected outputs as tensors, so ``#wrong`` counts real mismatches.
* ``ops``: each collective as torch.distributed calls on preallocated buffers, in nccl-tests' placements
  (all_reduce, broadcast and reduce in place only: torch has no out-of-place form).
* ``timing``: the timed batches (device events or wall clock, the stopping rules of ``bench.batches``).
* ``sweep`` and ``rank``: one rank's sweep into rows, and the rank program
  (``python -m gpufabric.engines.torch.rank``).
* ``group_rank``: isolate's group rounds, one sub-communicator per group, timed with ``ops`` and
  ``timing`` (``python -m gpufabric.engines.torch.group_rank``).

Importing this package imports nothing; torch is imported by the modules that use it. So it exports
nothing: the rank programs are run as modules, and the harness and tests import the module they need.
"""

__all__: list[str] = []
