"""Which collective a file measured: its own header or program wins over its file name (a suite that wraps
nccl-tests names its files its own way); and rccl-tests' JSON-lines output, in both spellings it has had.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gpufabric.collectives import NCCL_TESTS_PROGRAMS
from gpufabric.errors import InputError
from gpufabric.results.readers import read_run
from gpufabric.results.readers.collective_names import program_name

NCCL_TESTS = Path(__file__).parents[1] / "fixtures" / "nccl_tests"
# Real nccl-tests 2.19.6 output (a test header each) and -J JSON (the program in its args).
NAMED = sorted((NCCL_TESTS / "h100x1_v2_19_6").glob("1rank_*.log")) + sorted(
    (NCCL_TESTS / "h100x1_v2_19_6" / "mpirun_4vnodes_bf16_max").glob("*.json")
)
RCCL_PR93 = (
    Path(__file__).parents[1] / "fixtures" / "corpus2" / "tables" / "rocmrccltests93_json_lines_4gpus.json"
)


@pytest.mark.parametrize("path", NAMED, ids=lambda p: p.name)
def test_the_files_own_collective_wins_over_a_file_name_naming_another(path: Path, tmp_path: Path) -> None:
    truth = read_run(path).series[0].collective
    for other in (name for name in NCCL_TESTS_PROGRAMS if name != truth):
        # the way wrapper suites name their outputs: another collective's name, in a directory named too
        renamed = tmp_path / f"suite_{other}" / f"{other}_results{path.suffix}"
        renamed.parent.mkdir(exist_ok=True)
        shutil.copyfile(path, renamed)
        [series] = read_run(renamed).series
        assert series.collective == truth, (renamed.name, series.collective)
        assert not series.collective_inferred


def test_a_wrapper_prefixed_binary_names_its_program() -> None:
    # NVIDIA/nccl-tests#318 built `nccl_alltoall_perf`; `_perf` names the program whatever comes before
    assert program_name("./nccl_alltoall_perf -b 32M -e 128M") == "alltoall"
    assert program_name("/opt/build/all_reduce_perf_mpi -b 8") == "all_reduce"
    assert program_name("mygather_perf") is None


def test_rccl_tests_json_as_pr93_wrote_it() -> None:
    run = read_run(RCCL_PR93)
    [series] = run.series
    assert (series.collective, series.nranks, series.collective_inferred) == ("all_reduce", 4, False)
    assert [row.size_bytes for row in series.rows] == [1024, 2048, 4096]
    assert (
        series.rows[-1].in_place is None and not run.complete
    )  # the excerpt stops after an out-of-place line


def test_rccl_tests_json_as_reporter_addresult_writes_it(tmp_path: Path) -> None:
    """Constructed from the format ``Reporter::addResult`` prints in ROCm/rccl-tests src/common.cu
    (commit c0eac93f): ``"key":value`` pairs, text unquoted, MPI fields; the numbers are illustrative."""
    lines = [
        '{"name":ReduceScatter, "nodes":1, "ranks":2, "ranksPerNode":2, "gpusPerRank":4, "size":1024, '
        '"type":float, "redop":sum, "inPlace":0, "time":20.5, "algBw":0.05, "busBw":0.04, "wrong":0}',
        '{"name":ReduceScatter, "nodes":1, "ranks":2, "ranksPerNode":2, "gpusPerRank":4, "size":1024, '
        '"type":float, "redop":sum, "inPlace":1, "time":20.1, "algBw":0.05, "busBw":0.04, "wrong":N/A}',
    ]
    path = tmp_path / "rs.json"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    run = read_run(path)
    [series] = run.series
    [row] = series.rows
    # the JSON's size is what one rank receives; the text table prints the send buffer: 1024 x 8 ranks
    assert (series.collective, series.nranks, row.size_bytes, row.count) == ("reduce_scatter", 8, 8192, 256)
    assert row.out_of_place is not None and row.out_of_place.wrong == 0
    assert row.in_place is not None and row.in_place.wrong is None and run.complete


def test_a_json_line_of_another_tool_is_refused_with_what_was_expected(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text('{"name":"MyBench", "busBw":1.0, "algBw":1.0, "inPlace":0, "size":8, "time":1}\n')
    with pytest.raises(InputError, match=r"not an rccl-tests JSON result line .*MyBench.*AllReduce"):
        read_run(path)
