"""The shape a user names instead of the run's own (``--instance-type``: the catalog's; ``--snapshot FILE``: a
captured node snapshot), for every command that judges results. One of the two, or neither."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict

from gpufabric.errors import UsageError
from gpufabric.hardware import NodeShape


class GivenShape(BaseModel):
    """A shape the command line gave, and how to say where it came from."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    shape: NodeShape
    source: str


def given_shape(instance_type: str | None, snapshot: Path | None) -> GivenShape | None:
    """The shape ``--instance-type`` or ``--snapshot`` names (None when neither is given)."""
    from gpufabric.expect import load_shape, shape_from_instance  # the catalog loads on first use

    if instance_type and snapshot is not None:
        raise UsageError("--instance-type and --snapshot both give the shape; pass one of them")
    if snapshot is not None:
        return GivenShape(shape=load_shape(snapshot), source=f"--snapshot {snapshot}")
    if instance_type:
        return GivenShape(shape=shape_from_instance(instance_type), source=f"--instance-type {instance_type}")
    return None
