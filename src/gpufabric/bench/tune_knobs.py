"""Each backend's tune knobs by name: NCCL's socket knobs (``tune_search.NCCL_KNOBS``) or gloo's devices
(``tune_gloo.GLOO_KNOBS``). Apart from both, so that the gloo knobs, built on the search's types, are not
imported back by the search (``tests/test_import_graph.py``).
"""

from __future__ import annotations

from gpufabric.bench.tune_gloo import GLOO_KNOBS
from gpufabric.bench.tune_search import NCCL_KNOBS, Knobs


def knobs_for(backend: str) -> Knobs:
    """The knobs of ``backend``'s socket path: NCCL's, or gloo's (``bench.tune_gloo``)."""
    return GLOO_KNOBS if backend == "gloo" else NCCL_KNOBS
