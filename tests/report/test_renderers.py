"""One protocol for every renderer: ``render_document`` picks the renderer by the document's type, renders
each format the renderer lists exactly as the renderer alone does, and refuses any other format in one
line that names the valid ones."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import BaseModel

from gpufabric.analysis import Comparison, compare_runs, doctor
from gpufabric.analysis.isolate import ClusterModel, SearchOptions, SimulatedMeasurer, run_isolation
from gpufabric.analysis.isolate.nodes import numbered_nodes
from gpufabric.capabilities import probe_environment
from gpufabric.catalog import InstanceListing, get_instance, list_instances
from gpufabric.errors import UsageError
from gpufabric.inventory import ClusterPlan, NodeListing, build_inventory, parse_scontrol_nodes, plan_groups
from gpufabric.launch import RankProgram
from gpufabric.launch.local import LocalLauncher
from gpufabric.planner import Plan, PlanRequest, plan
from gpufabric.report import (
    CATALOG_FORMATS,
    COMPARE_FORMATS,
    DOCTOR_FORMATS,
    NODES_FORMATS,
    PLAN_FORMATS,
    RUN_FORMATS,
    TEXT_WIDTH,
    Format,
    formats_of,
    register,
    render_compare,
    render_document,
    render_run,
)
from gpufabric.report.renderers import registered
from gpufabric.results import Measurement, Row, RunResult, Series
from gpufabric.train.result import TrainAB

FIXTURES = Path(__file__).parents[1] / "fixtures"


def _run(label: str, busbw: float) -> RunResult:
    rows = [
        Row(
            size_bytes=size,
            count=size // 4,
            dtype="float",
            out_of_place=Measurement(time_us=size / (busbw * 1e3), algbw_gbs=busbw, busbw_gbs=busbw),
        )
        for size in (1024, 1 << 20)
    ]
    return RunResult(label=label, series=[Series(collective="sendrecv", rows=rows)])


def _documents() -> list[BaseModel]:
    inventory = build_inventory(
        parse_scontrol_nodes(
            (FIXTURES / "inventory" / "scontrol_show_nodes_oneliner_slurm-22.05.8.txt").read_text()
        ),
        source="slurm",
    )
    return [
        _run("efa", 40.0),
        compare_runs([_run("efa", 40.0), _run("socket", 10.0)]),
        doctor([FIXTURES / "nccl_logs" / "h200x4_socket"]),
        probe_environment({}),
        get_instance("p5.48xlarge"),
        InstanceListing(cloud="aws", instances=list_instances("aws")),
        plan(PlanRequest(instance_type="p5.48xlarge")),
        NodeListing(inventory=inventory),
        ClusterPlan(inventory=inventory, plans=plan_groups(inventory)),
        TrainAB.model_validate_json((FIXTURES / "gpu_h200x4" / "train_ddp_ab.json").read_text()),
        run_isolation(
            SimulatedMeasurer(ClusterModel(node_count=8, slow_nodes={3: 0.3}, noise=0.02, seed=1)),
            numbered_nodes(8),
            SearchOptions(),
        ),
        LocalLauncher().render(
            RankProgram(
                argv=["python3", "-c", "pass"], nranks=2, env={"NCCL_DEBUG": "WARN"}, workdir=Path("run")
            )
        ),
    ]


@pytest.mark.parametrize("document", _documents(), ids=lambda d: type(d).__name__)
def test_every_format_a_renderer_lists_renders_as_the_renderer_alone(document: BaseModel) -> None:
    entry = registered(type(document))
    assert entry.formats, type(document).__name__
    for fmt in entry.formats:
        if isinstance(document, Plan) and fmt in (Format.SKY, Format.SBATCH):
            # A kubernetes plan has no SkyPilot task or sbatch script: said in one line, with the fix.
            with pytest.raises(UsageError, match=f"^--format {fmt.value}: .* use --platform "):
                render_document(document, fmt)
            continue
        text = render_document(document, fmt)
        assert text == entry.render(document, fmt)
        assert text.endswith("\n") and text.strip(), (type(document).__name__, fmt)
        assert render_document(document, fmt.value) == text  # the word the user typed is the same format
        if fmt is Format.JSON:
            json.loads(text)


def test_the_formats_registered_are_the_renderers_own() -> None:
    assert formats_of(RunResult) == RUN_FORMATS
    assert formats_of(Comparison) == COMPARE_FORMATS
    assert formats_of(type(doctor([FIXTURES / "nccl_logs" / "h200x4_socket"]))) == DOCTOR_FORMATS
    assert formats_of(type(get_instance("p5.48xlarge"))) == CATALOG_FORMATS
    assert formats_of(NodeListing) == NODES_FORMATS
    assert formats_of(type(plan(PlanRequest(instance_type="p5.48xlarge")))) == PLAN_FORMATS


def test_a_format_the_renderer_lacks_is_one_line_naming_the_valid_ones() -> None:
    with pytest.raises(
        UsageError, match=r"^--format: unknown value 'yaml'; choose from table, json, csv, markdown$"
    ):
        render_document(_run("a", 1.0), Format.YAML)
    with pytest.raises(UsageError, match=r"unknown value 'html'; choose from table, markdown, csv, json$"):
        render_document(compare_runs([_run("a", 1.0), _run("b", 2.0)]), "html")


def test_the_registry_dispatches_on_the_document_type() -> None:
    comparison = compare_runs([_run("a", 1.0), _run("b", 2.0)])
    assert render_document(comparison, Format.CSV) == render_compare(comparison, Format.CSV)
    assert render_document(_run("a", 1.0), Format.TABLE) == render_run(_run("a", 1.0), Format.TABLE)
    with pytest.raises(TypeError, match="no renderer is registered for dict"):
        render_document({"label": "a"}, Format.JSON)


def test_registering_a_renderer_is_one_line_and_subclasses_use_it() -> None:
    class Note(BaseModel):
        text: str

    class LongNote(Note):
        pass

    register(Note, (Format.TEXT,), lambda note, fmt: note.text + "\n")
    assert render_document(LongNote(text="hello"), "text") == "hello\n"
    with pytest.raises(UsageError, match=r"choose from text$"):
        render_document(Note(text="x"), Format.JSON)


def test_a_rich_table_renders_as_plain_text_at_the_fixed_width() -> None:
    report = doctor([FIXTURES / "nccl_logs" / "h200x4_socket"])
    text = render_document(report, Format.TABLE)
    assert "\x1b[" not in text  # no colour codes, whatever terminal runs the tests
    assert max(len(line) for line in text.splitlines()) <= TEXT_WIDTH
    assert text.rstrip().endswith(f"doctor: {report.verdict.label}")


def test_plan_formats_are_the_whole_plan_its_table_and_each_export_kind() -> None:
    """``PLAN_FORMATS`` is written out in ``report.formats`` (``--help`` reads it without the planner):
    it must still name every kind the planner exports alone, and nothing else."""
    from gpufabric.planner import EXPORT_KINDS

    assert [f.value for f in PLAN_FORMATS] == ["yaml", "table", *EXPORT_KINDS]
