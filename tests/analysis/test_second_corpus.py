"""The second public corpus (issue #35): NCCL logs and nccl-tests / rccl-tests tables from public threads,
each with what a careful human reads in it (``tests/fixtures/corpus2/truth.yaml``, source URL per file).

Logs go through the doctor: the transport it names, the nodes it counts, what it says of the net plugin,
GDR and the intra-node path must agree with the reading, and nothing may be said to cross hosts that the
lines do not show crossing. Every log is also read as each common log collector hands it over (journald,
Kubernetes CRI and JSON shippers, ``[rank0]:``, torchrun's ``[default0]:``): the attestation must not
change. Tables go through ``show``'s reader: the collective (or the ones the numbers allow), whether it is
marked inferred, ranks, rows and one busbw value.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from gpufabric.analysis.doctor import SubjectReport, Verdict, diagnose, load_evidence, resolve_expectation
from gpufabric.nccl_logs import attest_lines
from gpufabric.report import Format, render_run
from gpufabric.results.attestation import Attestation
from gpufabric.results.readers import read_run

CORPUS = Path(__file__).parents[1] / "fixtures" / "corpus2"
TRUTH: dict[str, dict[str, Any]] = yaml.safe_load((CORPUS / "truth.yaml").read_text(encoding="utf-8"))
LOGS = sorted(TRUTH["logs"])
TABLES = sorted(TRUTH["tables"])


def test_the_corpus_is_large_sourced_and_complete() -> None:
    assert len(LOGS) + len(TABLES) >= 30
    on_disk = {p.stem for p in (CORPUS / "logs").glob("*.log")} | {
        p.name for p in (CORPUS / "tables").iterdir()
    }
    assert on_disk == set(LOGS) | set(TABLES), "every fixture has a truth and every truth a fixture"
    for entry in [*TRUTH["logs"].values(), *TRUTH["tables"].values()]:
        assert entry["source"].startswith("https://github.com/") and entry["reads"].strip()


def _doctor(name: str) -> SubjectReport:
    (evidence,) = load_evidence([CORPUS / "logs" / f"{name}.log"])
    return diagnose(evidence, resolve_expectation(None, None))


def _check(report: SubjectReport, check_id: str) -> tuple[Verdict, str]:
    [check] = [c for c in report.checks if c.id == check_id]
    return check.verdict, check.cause


@pytest.mark.parametrize("name", LOGS)
def test_the_doctor_reads_each_log_as_a_human_does(name: str) -> None:
    truth = TRUTH["logs"][name]
    report = _doctor(name)
    claims = report.attestation
    assert claims is not None
    att = report_attestation(name)
    inter = claims.inter_node

    if truth["transport"] == "unknown":
        assert inter.value in (None, "none"), inter
    else:
        assert att.network_kind == truth["transport"], (att.network, att.networks)
        assert inter.value is None or inter.value == "none" or att.network_kind == truth["transport"]

    crossing = truth.get("between_nodes")
    fabric_verdict, fabric_cause = _check(report, "fabric-in-use")
    if crossing is False:  # nothing may be said to cross hosts
        assert inter.value in (None, "none"), inter
        assert fabric_verdict is Verdict.SKIP, fabric_cause
    if crossing is True:
        assert inter.confidence == "proven" and inter.value not in (None, "none"), inter

    if "intra" in truth:
        assert truth["intra"] in str(claims.intra_node.value), claims.intra_node

    nodes, claimed = truth.get("nodes"), claims.nodes
    if isinstance(nodes, int) and isinstance(claimed.value, int):
        if claimed.confidence == "proven":
            assert claimed.value == nodes, claimed
        assert claimed.value <= nodes, claimed  # inferred counts are "at least"

    plugin_verdict, plugin_cause = _check(report, "net-plugin")
    plugin = truth.get("plugin")
    if plugin == "none":
        assert claims.net_plugin.value is None, claims.net_plugin
        assert plugin_verdict is not Verdict.FAIL, plugin_cause
    if plugin == "fallback":
        assert "not used" in str(claims.net_plugin.value), claims.net_plugin
        assert plugin_verdict in (Verdict.WARN, Verdict.FAIL) and "fell back" in plugin_cause
    if plugin == "unknown":
        assert claims.net_plugin.value is None, claims.net_plugin

    if "gdr" in truth:
        assert claims.gdr.value is truth["gdr"], claims.gdr


def report_attestation(name: str) -> Attestation:
    (evidence,) = load_evidence([CORPUS / "logs" / f"{name}.log"])
    assert evidence.attestation is not None
    return evidence.attestation


# What each collector puts around a line (formats as the collectors document them).
COLLECTORS: dict[str, Callable[[str], str]] = {
    "torch [rank0]:": lambda line: f"[rank0]:{line}",
    "torchrun --tee [default0]:": lambda line: f"[default0]:{line}",
    "journald short": lambda line: f"Jun 05 12:00:01 node1 python3[1234]: {line}",
    "kubernetes CRI": lambda line: f"2024-06-05T12:00:01.123456789Z stdout F {line}",
    "kubectl --timestamps": lambda line: f"2024-06-05T12:00:01.123456789Z {line}",
    "docker json-file": lambda line: json.dumps({"log": f"{line}\n", "stream": "stdout", "time": "t"}),
    "fluent-bit message": lambda line: json.dumps({"kubernetes": {"pod_name": "p"}, "message": line}),
    "cloud logging textPayload": lambda line: json.dumps({"textPayload": line, "severity": "INFO"}),
    "journalctl -o json": lambda line: json.dumps({"MESSAGE": line, "_PID": "1234"}),
}


def _reading(lines: list[str]) -> tuple[object, ...]:
    att = attest_lines(lines)
    assert att.claims is not None
    claims = {name: (claim.value, claim.confidence) for name, claim in att.claims.items()}
    return claims, att.hosts, att.network, att.net_plugin, att.transports


# this corpus and the first one (tests/fixtures/nccl_logs/public)
EVERY_LOG = sorted((CORPUS / "logs").glob("*.log")) + sorted(
    (CORPUS.parent / "nccl_logs" / "public").glob("*.log")
)


@pytest.mark.parametrize("collector", sorted(COLLECTORS))
def test_a_collector_around_the_lines_changes_nothing(collector: str) -> None:
    wrap = COLLECTORS[collector]
    for path in EVERY_LOG:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        assert _reading([wrap(line) for line in lines]) == _reading(lines), path.name


@pytest.mark.parametrize("name", TABLES)
def test_show_reads_each_table_as_a_human_does(name: str) -> None:
    truth = TRUTH["tables"][name]
    run = read_run(CORPUS / "tables" / name)
    assert len(run.series) == 1, [s.collective for s in run.series]
    series = run.series[0]
    allowed = truth.get("collective_any_of") or [truth["collective"]]
    assert series.collective in allowed
    assert series.collective_inferred == truth["inferred"]
    if "nranks" in truth:
        assert series.nranks == truth["nranks"]
    assert len(series.rows) == truth["rows"], [r.size_bytes for r in series.rows]
    busbw = truth["busbw"]
    [row] = [r for r in series.rows if r.size_bytes == busbw["size"]]
    measured = row.placement(busbw["placement"])
    assert measured is not None and measured.busbw_gbs == pytest.approx(busbw["value"])
    assert render_run(run, Format.TABLE).strip()  # show prints it
