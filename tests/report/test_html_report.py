"""The HTML report: self-contained, secrets never shown, and rendered by a real headless Chromium."""

from __future__ import annotations

import re
import shutil
import subprocess
from datetime import datetime, timezone
from pathlib import Path

import matplotlib.image
import pytest

from gpufabric.report.html import build_report, write_report
from gpufabric.results.attestation import Attestation
from gpufabric.results.readers import read_run

NCCL = Path(__file__).parents[1] / "fixtures" / "nccl_tests"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
WHEN = datetime(2025, 1, 1, tzinfo=timezone.utc)


def _chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    command = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp_path / 'chromium-profile'}",
        *args,
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=True)


def _comparison_report(tmp_path: Path) -> Path:
    skypilot = read_run(NCCL / "seed003_skypilot_rdma_h200_all_gather.log", "SkyPilot RDMA")
    gcp = read_run(NCCL / "seed003_gib_rdma_h200_all_gather.log", "GCP RDMA")
    # A secret that slipped into a result unredacted must still never reach the page.
    gcp = gcp.model_copy(
        update={
            "metadata": gcp.metadata.model_copy(
                update={"env": {"NCCL_IB_HCA": "mlx5_0", "HF_TOKEN": "hf_do_not_show_me_123"}}
            ),
            "attestation": Attestation(
                nccl_version="2.26.6", network="IB", transports={"NET/IB/0/GDRDMA": 32}, gdr=True
            ),
        }
    )
    return write_report(tmp_path / "report.html", build_report([skypilot, gcp], generated_at=WHEN))


def test_report_is_self_contained_and_redacted(tmp_path: Path) -> None:
    text = _comparison_report(tmp_path).read_text()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", text)  # nothing loaded from a network
    assert "<script" not in text
    assert text.count("<svg") == 3  # busbw, latency, speed-up
    assert "hf_do_not_show_me_123" not in text and "HF_TOKEN" in text and "&lt;redacted&gt;" in text
    assert "NET/IB/0/GDRDMA: 32" in text and "transport attestation" in text
    assert "No transport attestation in this run" in text  # the SkyPilot run carries none
    assert "What stands out" in text and "2.26.6+cuda12.8" in text


def test_single_run_report_shows_its_series(tmp_path: Path) -> None:
    run = read_run(NCCL / "constructed_truncated.log")
    text = build_report([run], generated_at=WHEN)
    assert 'class="series"' in text and text.count("<svg") == 2
    assert "incomplete" in text and "stops after 4194304 bytes" in text


@pytest.mark.skipif(CHROMIUM is None, reason="needs the chromium package (make os-deps)")
def test_chromium_renders_the_tables_and_plots(tmp_path: Path) -> None:
    report = _comparison_report(tmp_path)
    dom = _chromium(tmp_path, "--dump-dom", report.as_uri()).stdout
    assert "<title>gpufabric report: SkyPilot RDMA, GCP RDMA</title>" in dom
    assert len(re.findall(r'<table class="compare">', dom)) == 1
    assert len(re.findall(r"<tr>", dom)) > 24 + 5  # the 24 compared sizes plus the other tables
    assert len(re.findall(r'<figure class="chart"><svg', dom)) == 3
    assert "| 8 GB |" not in dom and "<td>8 GB</td>" in dom


@pytest.mark.skipif(CHROMIUM is None, reason="needs the chromium package (make os-deps)")
def test_chromium_screenshot_is_a_real_page(tmp_path: Path) -> None:
    report = _comparison_report(tmp_path)
    shot = tmp_path / "report.png"
    _chromium(
        tmp_path, "--window-size=1280,2000", "--hide-scrollbars", f"--screenshot={shot}", report.as_uri()
    )
    image = matplotlib.image.imread(shot)
    assert image.shape[:2] == (2000, 1280)
    gray = image[:, :, :3].mean(axis=2)
    assert 0.03 < (gray < 0.9).mean() < 0.6  # text, tables and plots drawn; not blank, not one colour
    top = gray[:400]
    assert (top < 0.5).mean() > 0.005  # the title and the runs table render at the top
    plot_band = image[500:1300, :, :3]
    colourful = (plot_band.max(axis=2) - plot_band.min(axis=2)) > 0.3
    assert colourful.mean() > 0.001  # the coloured plot lines made it onto the page
