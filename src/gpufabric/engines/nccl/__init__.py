"""The direct NCCL engine: NCCL called from Python through NVIDIA's nccl4py bindings, no torch in the rank.

torch.distributed adds 16-24 us of host work to every eager collective call (measured on one H100, 8 B
in-place all_reduce: torch 24.3 us, nccl4py's low-level binding 1.4 us, nccl-tests 0.4 us), which misreads
every latency-bound size. This engine keeps NCCL's own cost per call, as nccl-tests does:

* ``library``: which libnccl runs (the user's: ``--nccl-lib``, ``LD_LIBRARY_PATH``, the system's; a
  wheel's copy only as the last resort, and said so), loaded before nccl4py so nccl4py uses it.
* ``cuda``: device memory, a stream, events and CUDA graphs through cuda-bindings' runtime API.
* ``control``: the job's small side channel (unique id, gathers, stop decisions) over TCP, never NCCL.
* ``values``: exact inputs and expected outputs on the host (numpy), outside every timed region.
* ``check``: ``--check`` on one rank: fill, launch once, count the wrong elements (segments of one
  repeated period), on the host or through ``device_check``.
* ``device_check``: the fill and compare kernels (``kernels/check.cu`` as committed PTX) run on the GPU.
* ``collectives``: nccl-tests' layouts and placements for every collective nccl-tests 2.19 has.
* ``timer``, ``sweep`` and ``rank``: the timed batches, one rank's sweep into rows, and the rank program
  (``python -m gpufabric.engines.nccl.rank``).

Nothing here imports torch. Importing this package imports nothing optional either: nccl4py and
cuda-bindings are imported where they are used, with a one-line hint when they are missing. So it exports
nothing: the rank program is run as a module (``gpufabric.engines.RANK_MODULES``), and the harness and
tests import the module they need.
"""

__all__: list[str] = []
