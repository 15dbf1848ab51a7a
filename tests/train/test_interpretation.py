"""What the numbers mean, in words: the agreement band, the gloo A/B caveat, and train files vs readers.

The GPU documents are the real 4x H200 runs recorded in tests/fixtures/gpu_h200x4 (fabric on: exposed
comm 331% of the probe's prediction; fabric off: 96%).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gpufabric.report import Format, render_train
from gpufabric.report.train_section import train_section
from gpufabric.results.readers.train_document import is_train_result
from gpufabric.train import ab_caveat
from gpufabric.train.result import Prediction, TrainAB, read_train_document
from gpufabric.train.verdict import agreement_verdict

GPU_AB = Path(__file__).parents[1] / "fixtures" / "gpu_h200x4" / "train_ddp_ab.json"
GPU_BENCH = GPU_AB.with_name("bench_allreduce_nvlink.json")


def _prediction(agreement_pct: float) -> Prediction:
    return Prediction(
        busbw_source="probe",
        effective_busbw_gbs=100.0,
        predicted_comm_ms=10.0,
        measured_comm_ms=agreement_pct / 10,
        agreement_pct=agreement_pct,
        predicted_share=0.5,
        measured_share=0.5,
    )


@pytest.mark.parametrize(
    ("agreement_pct", "opening"),
    [
        (100.0, "agrees within +-15%"),
        (86.0, "agrees within +-15%"),
        (114.0, "agrees within +-15%"),
        (60.0, "40% below the prediction (outside +-15%): the overlap term dominates"),
        (5.0, "far below the prediction (outside +-15%): compute hides nearly all"),
        (331.0, "231% above the prediction (outside +-15%), more than even the serial 10.00 ms: contention"),
    ],
)
def test_agreement_is_said_in_words_with_its_band(agreement_pct: float, opening: str) -> None:
    assert agreement_verdict(_prediction(agreement_pct)).startswith(opening)


def test_gpu_ab_explains_each_arm_and_has_no_gloo_caveat() -> None:
    document = read_train_document(GPU_AB)
    assert isinstance(document, TrainAB) and ab_caveat(document) is None
    table = render_train(document, Format.TABLE)
    assert "# [fabric-on] agreement 331% (measured / predicted comm): 231% above the prediction" in table
    assert "# [fabric-off] agreement 96% (measured / predicted comm): agrees within +-15%" in table
    assert "caveat" not in table and "caveat" not in train_section([document])
    assert "agrees within +-15%" in render_train(document, Format.MARKDOWN)


def test_gloo_ab_caveat_reaches_the_html_report() -> None:
    document = read_train_document(GPU_AB)
    assert isinstance(document, TrainAB)
    for run in (document.on, document.off):
        run.metadata.backend = "gloo"
    caveat = ab_caveat(document)
    assert caveat is not None and "compares two CPU gloo runs" in caveat
    assert "says nothing about the fabric" in train_section([document])
    document.on.metadata.backend = "nccl"  # one arm on the fabric: a real comparison
    assert ab_caveat(document) is None


def test_is_train_result_tells_train_files_from_the_rest(tmp_path: Path) -> None:
    assert is_train_result(GPU_AB)
    assert not is_train_result(GPU_BENCH)  # a bench result: the readers' business
    broken = tmp_path / "broken.json"
    broken.write_text('{"kind": "train", ', encoding="utf-8")
    assert not is_train_result(broken) and not is_train_result(tmp_path / "missing.json")
    assert not is_train_result(tmp_path)


def test_bench_readers_refuse_a_train_file_in_one_line() -> None:
    # `show` and `compare` read through read_run: a train document gets the pointer, not a schema error.
    from gpufabric.errors import InputError
    from gpufabric.results.readers import read_run

    with pytest.raises(InputError) as caught:
        read_run(GPU_AB)
    message = str(caught.value)
    assert "is a train-bench result" in message and "train-bench --show" in message
    assert "\n" not in message


def test_each_arm_shows_the_transport_its_nccl_logs_prove() -> None:
    from gpufabric.nccl_logs.attest import attest_files
    from gpufabric.report.train_lines import transport_line

    logs = Path(__file__).parents[1] / "fixtures" / "nccl_logs"
    document = read_train_document(GPU_AB)
    assert isinstance(document, TrainAB)
    assert transport_line(document.on) == "transport: not attested, no NCCL logs (a gloo run)"
    document.on.attestation = attest_files(sorted((logs / "h200x4_nvlink").glob("*.log")))
    document.off.attestation = attest_files(sorted((logs / "h200x4_socket").glob("*.log")))
    saved = TrainAB.model_validate_json(document.model_dump_json())  # the field survives train.json
    table = render_train(saved, Format.TABLE)
    on_line = next(line for line in table.splitlines() if line.startswith("# [fabric-on] transport"))
    off_line = next(line for line in table.splitlines() if line.startswith("# [fabric-off] transport"))
    assert "P2P" in on_line and "NET/Socket" not in on_line, on_line
    assert "NET/Socket" in off_line and "network Socket" in off_line, off_line
    assert "- fabric-off: transport (from NCCL's logs): channels via NET/Socket" in render_train(
        saved, Format.MARKDOWN
    )
