"""``gpufabric isolate``: simulate mode end to end, node sources, and one-line errors for bad input."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from gpufabric.analysis.isolate import read_node_list
from gpufabric.cli.app import main
from gpufabric.launch.hostlist import expand_hostlist


def cli(
    args: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "argv", ["gpufabric", "isolate", *args])
    code = 0
    try:
        main()
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_simulate_table(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, _ = cli(["--simulate", "--nodes", "512", "--bad", "17", "--bad-link", "3-400", "--seed", "1"],
                       capsys, monkeypatch)  # fmt: skip
    assert code == 1  # convicted: exit 1, for health-check scripts
    first = out.splitlines()[0]
    assert first.startswith("found node node0017, link node0003-node0400 in ") and "rounds" in first
    assert "convicted node node0017" in out and "convicted link node0003-node0400" in out
    assert "verdicts: ok 509, slow-node 1, bad-link 2" in out


def test_simulate_json(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, _ = cli(
        ["--simulate", "--nodes", "64", "--bad", "node0009", "--format", "json"], capsys, monkeypatch
    )
    assert code == 1
    data = json.loads(out)
    assert data["node_count"] == 64 and data["verdicts"]["node0009"] == "slow-node"
    assert data["suspects"][0]["evidence"][0]["purpose"] == "screen"
    assert data["rounds"] == len(data["round_log"])


def test_simulate_from_a_node_list_with_dashed_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    listing = tmp_path / "nodes.txt"
    listing.write_text("gpu-a[01-16]\n# comment\npod/worker-0, pod/worker-1\n", encoding="utf-8")
    code, out, _ = cli(["--simulate", "--node-list", str(listing), "--bad-link", "gpu-a03-worker-1"],
                       capsys, monkeypatch)  # fmt: skip
    assert code == 1 and "convicted link gpu-a03-worker-1" in out


def test_node_sources(tmp_path: Path) -> None:
    assert expand_hostlist("gpu[008-010,2]") == ["gpu008", "gpu009", "gpu010", "gpu2"]
    assert expand_hostlist("plain") == ["plain"]
    listing = tmp_path / "pods.txt"
    listing.write_text("pod/a\npod/b\n", encoding="utf-8")
    assert read_node_list(listing) == ["a", "b"]


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["--simulate", "--nodes", "16", "--bad", "9999"], "--bad '9999'"),
        (["--simulate", "--nodes", "16", "--bad", "gpu7"], "--bad 'gpu7'"),
        (["--simulate", "--nodes", "16", "--bad-link", "1-1"], "--bad-link '1-1'"),
        (["--simulate", "--nodes", "16", "--bad-link", "3"], "--bad-link '3'"),
        (["--simulate", "--nodes", "1"], "--nodes 1"),
        (["--simulate", "--nodes", "16", "--noise", "0.9"], "--noise"),
        (["--simulate", "--nodes", "16", "--slow-factor", "1.5"], "--slow-factor"),
        (["--simulate", "--nodes", "16", "--group-size", "1"], "--group-size"),
        (["--simulate", "--nodes", "16", "--format", "xml"], "--format"),
        (["--simulate"], "node source"),
        (["--simulate", "--hostfile", "/no/such/hosts"], "/no/such/hosts"),
        (["--nodes", "16", "--node-list", "/x"], "node source"),
        (["--node-list", "/dev/null"], "at least 2"),
        (["--nodes", "16", "--bad", "3"], "--simulate"),
        # A flag of the other mode is refused by name, not silently ignored.
        (
            ["--simulate", "--nodes", "8", "--ranks", "4", "--on", "slurm", "--expected-gbps", "90"],
            "--ranks, --on, --expected-gbps: real-run flag(s), but --simulate runs no ranks",
        ),
        (["--simulate", "--nodes", "8", "--iters", "20"], "--iters: real-run flag(s)"),
        (["--simulate", "--nodes", "8", "-v"], "--verbose: real-run flag(s)"),
        (["--simulate", "--nodes", "8", "--dry-run"], "--dry-run: real-run flag(s)"),
        (["--nodes", "4", "--slow-factor", "0.3"], "--slow-factor: simulator flag(s)"),
        (["--nodes", "4", "--noise", "0.03", "--link-factor", "0.5"], "--link-factor, --noise: simulator"),
        # The proof's knobs: a false-alarm rate in (0, 0.2], at least 2 retests.
        (["--simulate", "--nodes", "8", "--alpha", "0"], "--alpha 0.0"),
        (["--simulate", "--nodes", "8", "--alpha", "nan"], "--alpha nan"),
        (["--simulate", "--nodes", "8", "--alpha", "0.5"], "0 < alpha <= 0.2"),
        (["--simulate", "--nodes", "8", "--repeats", "1"], "2 <= repeats <= 30"),
        (["--nodes", "4", "--repeats", "99"], "--repeats 99"),
    ],
)
def test_bad_input_is_one_line_exit_2(
    args: list[str], named: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, err = cli(args, capsys, monkeypatch)
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and out == ""
    assert len(lines) == 1 and lines[0].startswith("Error: ") and named in lines[0], err


def test_duplicate_node_in_list_is_an_input_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    listing = tmp_path / "dup.txt"
    listing.write_text("n1\nn2\nn1\n", encoding="utf-8")
    code, _, err = cli(["--simulate", "--node-list", str(listing)], capsys, monkeypatch)
    assert code == 2 and "'n1' is listed twice" in err


def test_a_hostfile_of_one_node_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The hostfile `gpufabric watch` wrote on the 4x H200 run (one node, the stopped rank's): isolate had
    # crashed on it with a pydantic traceback (GroupRound: "groups must be disjoint, of 2 or more ranks").
    hosts = tmp_path / "suspects.hosts"
    hosts.write_text("192.0.2.2 slots=1\n", encoding="utf-8")
    code, out, err = cli(["--on", "mpirun", "--hostfile", str(hosts), "--ranks", "1"], capsys, monkeypatch)
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and out == "" and len(lines) == 1, err
    assert lines[0] == (
        f"Error: --hostfile {hosts}: 1 node (192.0.2.2); isolate measures nodes against each other in groups "
        "of 2 or more, so it needs at least 2 nodes: add a healthy node as a control (one host per line)"
    )


@pytest.mark.parametrize(
    ("args", "code", "first"),
    [
        (["--nodes", "8"], 0, "no slow node or link found"),
        (["--nodes", "8", "--bad", "5"], 1, "found node node0005"),
        (["--nodes", "8", "--bad", "0,1,2,3,4,5,6,7"], 1, "unresolved: nothing convicted"),
        (["--nodes", "3", "--bad", "1"], 1, "unresolved: nothing convicted"),
        (["--nodes", "5", "--bad", "1"], 1, "found node node0001"),
        (["--nodes", "9", "--bad", "1"], 1, "found node node0001"),
        (["--nodes", "4095", "--bad", "1"], 1, "found node node0001"),
    ],
)
def test_exit_code_says_whether_anything_needs_an_operator(
    args: list[str], code: int, first: str, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    got, out, err = cli(["--simulate", *args], capsys, monkeypatch)
    assert (got, err) == (code, "") and out.splitlines()[0].startswith(first), out


def test_help_documents_the_exit_codes(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, _ = cli(["--help"], capsys, monkeypatch)
    text = " ".join(out.split())
    assert code == 0 and "Exit codes: 0 nothing found" in text and "1 a node or link convicted" in text


def test_pod_list_on_kubernetes_says_what_works(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pods = tmp_path / "pods.txt"
    pods.write_text("pod/trainer-0\npod/trainer-1\npod/trainer-2\n", encoding="utf-8")
    code, out, err = cli(["--node-list", str(pods), "--on", "kubernetes"], capsys, monkeypatch)
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and out == "" and len(lines) == 1
    assert "--node-list with --on kubernetes" in lines[0]
    assert "--simulate --node-list PATH" in lines[0] and "--on slurm" in lines[0]
    # ... and the simulator does take the pod list.
    code, out, _ = cli(["--simulate", "--node-list", str(pods), "--bad", "trainer-1"], capsys, monkeypatch)
    assert code == 1 and out.startswith("unresolved")  # 3 pods: one group, no healthy partner


def test_proof_flags_reach_the_verdict(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, _ = cli(["--simulate", "--nodes", "64", "--bad", "9", "--alpha", "0.05", "--repeats", "4",
                        "--format", "json"], capsys, monkeypatch)  # fmt: skip
    (suspect,) = json.loads(out)["suspects"]
    assert code == 1 and suspect["verdict"] == "convicted"
    proof = suspect["proof"]
    assert proof["alpha"] == 0.05 and len(proof["suspect_ratios"]) == 4 and proof["p_value"] <= 0.05
