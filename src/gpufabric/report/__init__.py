"""Renderers: a run's table (nccl-tests' columns, also CSV, markdown, JSON), an A/B report, a training
run or A/B, a launch plan (what ``--dry-run`` prints), isolate's answer, and the output formats every
command's ``--format`` chooses from (``Format``)."""

from gpufabric.report.ab_render import AB_FORMATS, render_ab
from gpufabric.report.formats import Format, choices
from gpufabric.report.isolate_render import ISOLATE_FORMATS, render_isolate
from gpufabric.report.launch_plan_render import LAUNCH_PLAN_FORMATS, render_launch_plan
from gpufabric.report.nccl_table import FORMATS, render
from gpufabric.report.train_render import TRAIN_FORMATS, render_train

__all__ = [
    "AB_FORMATS",
    "FORMATS",
    "ISOLATE_FORMATS",
    "LAUNCH_PLAN_FORMATS",
    "TRAIN_FORMATS",
    "Format",
    "choices",
    "render",
    "render_ab",
    "render_isolate",
    "render_launch_plan",
    "render_train",
]
