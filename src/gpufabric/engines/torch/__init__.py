"""The torch.distributed engine: the rank program for gloo on CPU, other backends (hccl, xccl) and NCCL
through torch, where the direct NCCL engine (``engines.nccl``) is not installed or not asked for.

* ``data``: exact inputs and expected outputs as tensors, so ``#wrong`` counts real mismatches.
* ``ops``: each collective as torch.distributed calls on preallocated buffers, in nccl-tests' placements
  (all_reduce, broadcast and reduce in place only: torch has no out-of-place form).
* ``timing``: the timed batches (device events or wall clock, the stopping rules of ``bench.batches``).
* ``sweep`` and ``rank``: one rank's sweep into rows, and the rank program
  (``python -m gpufabric.engines.torch.rank``).

isolate's group rounds (``engines.torch.group_rank``) time their groups with ``ops`` and ``timing`` too.
Importing this package imports nothing; torch is imported by the modules that use it.
"""
