"""``LaunchPlan.redacted()`` is safe on its own (it is what ``plan.json`` stores and ``--dry-run`` prints):
a Kubernetes Secret's ``stringData`` and ``data`` lose every value, whatever the key is called, without
relying on the CLI's second pass over manifests; the plan itself keeps its values (a copy is redacted)."""

from __future__ import annotations

from pathlib import Path

from gpufabric.launch.base import LaunchPlan, RankProgram
from gpufabric.launch.registry import plan_task
from gpufabric.redact import REDACTED
from gpufabric.task import task_from_text


def test_redacted_plan_hides_secret_string_data_by_itself(tmp_path: Path) -> None:
    task = task_from_text(
        "name: s\nrun: echo hi\nresources:\n  image_id: docker:ubuntu\nenvs:\n  HF_TOKEN: hf_abcdef",
        source="t",
    )
    _, plan = plan_task(task, "kubernetes", workdir=tmp_path, settings=None)
    assert plan.manifests[0]["stringData"] == {"HF_TOKEN": "hf_abcdef"}  # the plan to execute keeps it
    safe = plan.redacted()
    assert safe.manifests[0]["kind"] == "Secret" and safe.manifests[0]["stringData"] == {"HF_TOKEN": REDACTED}
    assert "hf_abcdef" not in safe.model_dump_json()
    assert plan.manifests[0]["stringData"] == {"HF_TOKEN": "hf_abcdef"}  # redacted() made a copy


def test_any_key_of_a_secret_is_hidden_in_string_data_and_data(tmp_path: Path) -> None:
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "creds"},
        "stringData": {"PLAIN_NAME": "value-that-looks-harmless"},
        "data": {"OTHER": "dmFsdWUtMg=="},
    }
    plan = LaunchPlan(launcher="kubernetes", program=RankProgram(argv=["true"], nranks=1, workdir=tmp_path),
                      manifests=[secret])  # fmt: skip
    text = plan.redacted().model_dump_json()
    assert "value-that-looks-harmless" not in text and "dmFsdWUtMg==" not in text
    assert '"PLAIN_NAME":"' + REDACTED + '"' in text.replace(" ", "")
