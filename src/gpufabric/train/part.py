"""The base of every part of a training document: unknown fields are refused, so a document written by
another version of gpufabric fails in one line instead of being read half."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class TrainPart(BaseModel):
    """Every training document's model: unknown fields are refused."""

    model_config = ConfigDict(extra="forbid")
