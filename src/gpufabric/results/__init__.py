"""Results: the one model, our JSON/JSONL files, and (in readers/) everything we can read into it."""

from typing import TYPE_CHECKING

from gpufabric._lazy import lazy_package

if TYPE_CHECKING:  # the public names, each imported on first use (gpufabric._lazy)
    from gpufabric.results.attestation import Attestation, ChannelTransport, TransportClaims
    from gpufabric.results.expected import RunExpectation, SeriesExpectation, SizeJudgement
    from gpufabric.results.io import (
        NODES_DIR,
        RESULT_NAME,
        STREAM_NAME,
        StreamWriter,
        node_file,
        read_result,
        read_stream,
        write_result,
    )
    from gpufabric.results.model import (
        ENGINE_COLLECTIVES,
        SCHEMA_VERSION,
        Device,
        Measurement,
        Row,
        RunMetadata,
        RunResult,
        Series,
    )
    from gpufabric.results.run_dirs import (
        RunDirectory,
        describe_run_directory,
        is_single_run,
        register_run_directory,
    )
    from gpufabric.results.run_nodes import load_run_shapes
lazy_package(__name__)

__all__ = [
    "ENGINE_COLLECTIVES",
    "NODES_DIR",
    "RESULT_NAME",
    "SCHEMA_VERSION",
    "STREAM_NAME",
    "Attestation",
    "ChannelTransport",
    "Device",
    "Measurement",
    "Row",
    "RunDirectory",
    "RunExpectation",
    "RunMetadata",
    "RunResult",
    "Series",
    "SeriesExpectation",
    "SizeJudgement",
    "StreamWriter",
    "TransportClaims",
    "describe_run_directory",
    "is_single_run",
    "load_run_shapes",
    "node_file",
    "read_result",
    "read_stream",
    "register_run_directory",
    "write_result",
]
