"""Renderers: a run's table (nccl-tests' columns, also CSV, markdown, JSON), an A/B report, isolate's
answer, and the output formats every command's ``--format`` chooses from (``Format``)."""

from gpufabric.report.ab_render import AB_FORMATS, render_ab
from gpufabric.report.formats import Format, choices
from gpufabric.report.isolate_render import ISOLATE_FORMATS, render_isolate
from gpufabric.report.nccl_table import FORMATS, render

__all__ = [
    "AB_FORMATS",
    "FORMATS",
    "ISOLATE_FORMATS",
    "Format",
    "choices",
    "render",
    "render_ab",
    "render_isolate",
]
