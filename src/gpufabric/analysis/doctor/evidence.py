"""What the doctor judges (Evidence: numbers and/or NCCL attestation of one run) and against what
(Expectation: a fabric from ``--expect`` or the catalog entry of ``--instance-type``).

Loading rules: our result JSON/JSONL is one run each (attestation from the result, else from the NCCL logs
its metadata names); nccl-tests JSON is one run; a text file holding an nccl-tests table is one run (its
mixed-in NCCL INFO lines attested too); text files without a table are NCCL logs, split into runs by the
communicators their ranks joined (``runs.py``: files merge only when they are different ranks of one
job). When a single table run was given, the logs join it if they are its job's (or prove no job at all
and form one group). Logs our result names as its own (``metadata.log_files``, or the same names in its run
directory's ``nccl/``) are that run's and are not judged again. A run directory (holding ``result.json``)
stands for its result; any other directory for the ``*.log`` files under it.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from gpufabric.analysis.doctor.runs import LogRun, comm_members, group_runs, holds_nccl_lines, run_label
from gpufabric.analysis.expected.given import GivenShape, given_shape
from gpufabric.boundary_names import NCCL_LOG_DIR
from gpufabric.catalog import (
    FabricName,
    InstanceType,
    get_instance,
    list_baseline_curves,
    list_fabrics,
    resolve_fabric,
)
from gpufabric.errors import GpufabricError, InputError, UsageError
from gpufabric.nccl_logs.attest import attest_files
from gpufabric.results.attestation import Attestation, NetworkKind
from gpufabric.results.io import RESULT_NAME
from gpufabric.results.model import RunResult
from gpufabric.results.readers import read_run, sniff

# The catalog's one fabric vocabulary: every name and alias (tcpx, gpudirect-tcpx, ib, rdma, gib ...).
EXPECT_CHOICES: tuple[str, ...] = tuple(f.value for f in FabricName)
ExpectChoice = str
_MAX_NESTED_RESULTS = 256  # a tune root holds one job per candidate and round: a few dozen


# Read from the catalog on first use, not at import: loading its data costs every CLI start ~0.7 s.
@cache
def network_of() -> dict[FabricName, NetworkKind]:
    """How each inter-node fabric shows up as NCCL's network (the catalog's ``network`` family)."""
    return {f.name: f.network for f in list_fabrics() if f.network is not None}


@cache
def plugin_fabrics() -> frozenset[FabricName]:
    """Fabrics that only exist through an external NCCL net plugin (the catalog's ``plugin``)."""
    return frozenset(f.name for f in list_fabrics() if f.plugin)


class Expectation(BaseModel):
    """The fabric a run should have used, and the shape facts (NIC count, GDR) when the catalog knows them."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    fabric: FabricName | None = None
    instance: InstanceType | None = None
    source: str = "nothing (pass --expect or --instance-type to judge the fabric)"
    given: GivenShape | None = Field(
        default=None, description="the node shape busbw is judged on instead of the run's own"
    )

    @property
    def network(self) -> NetworkKind | None:
        return network_of().get(self.fabric) if self.fabric else None

    @property
    def intra_node_only(self) -> bool:
        return self.fabric in (FabricName.NVLINK, FabricName.PCIE)

    @property
    def needs_plugin(self) -> bool:
        return self.fabric in plugin_fabrics()

    @property
    def gdr_expected(self) -> bool:
        if self.fabric in (FabricName.GPUDIRECT_RDMA, FabricName.INFINIBAND, FabricName.ROCE):
            return True
        return bool(self.instance and self.instance.efa_device_rdma and self.fabric is FabricName.EFA)


def _check_agrees(key: str, fabric: FabricName, instance: InstanceType) -> None:
    """Refuse ``--expect`` that the shape cannot have run: judging against it would only mislead. Agreeing
    is the shape's own fabric (or one NCCL sees as the same network: ib for a RoCE shape), sockets (the
    fabric-off side of an A/B), the shape's intra-node link (a one-host run), or a fabric the catalog
    publishes a baseline for on this shape."""
    network, shape_network = network_of().get(fabric), network_of().get(instance.fabric)
    same_network = network is not None and network == shape_network
    published = any(curve.fabric == fabric for curve in list_baseline_curves(instance.name))
    if fabric in (instance.fabric, FabricName.SOCKET, instance.intra_node) or same_network or published:
        return
    own = next(
        (min((f.name.value, *f.aliases), key=len) for f in list_fabrics() if f.network == shape_network), None
    )
    instead = f"--expect {own}" if own else "no --expect"
    raise UsageError(
        f"--expect {key} contradicts --instance-type {instance.name}, whose fabric is "
        f"{instance.fabric.value}; drop one of them, or pass {instead} (--expect socket judges a "
        "fabric-off run)"
    )


def resolve_expectation(
    expect: str | None, instance_type: str | None, snapshot: Path | None = None
) -> Expectation:
    """``--expect`` wins over the instance's own fabric where the shape can run it (judging a shape's
    fabric-off run is legitimate); a fabric the shape does not have is refused (``_check_agrees``).
    ``--expect`` takes every spelling of the catalog's vocabulary (``tcpx`` and ``gpudirect-tcpx`` alike).
    ``--instance-type`` or ``--snapshot`` also give the shape busbw is judged on (``given``)."""
    resolved = _resolve(expect, instance_type)
    given = given_shape(instance_type, snapshot)
    return resolved.model_copy(update={"given": given}) if given is not None else resolved


def _resolve(expect: str | None, instance_type: str | None) -> Expectation:
    instance = get_instance(instance_type) if instance_type else None
    if expect is not None:
        key = expect.strip().lower()
        try:
            fabric = resolve_fabric(key, option="--expect")
        except GpufabricError as exc:
            raise UsageError(str(exc)) from None
        if instance is not None:
            _check_agrees(key, fabric, instance)
        return Expectation(fabric=fabric, instance=instance, source=f"--expect {key}")
    if instance is not None:
        return Expectation(
            fabric=instance.fabric,
            instance=instance,
            source=f"--instance-type {instance.name}: {instance.fabric.value}, {instance.nic_count} NICs",
        )
    return Expectation()


class Evidence(BaseModel):
    """One run as the doctor sees it: its numbers (when any) and what NCCL's log says it did."""

    model_config = ConfigDict(extra="forbid")

    label: str
    sources: list[str]
    result: RunResult | None = None
    attestation: Attestation | None = None

    @property
    def hosts(self) -> list[str]:
        if self.result:
            meta = self.result.metadata
            hosts = meta.hosts or sorted({d.host for d in meta.devices if d.host})
            if hosts:
                return hosts
        return self.attestation.hosts if self.attestation else []

    @property
    def nodes(self) -> int | None:
        """Hosts of the run, only where the inputs show them all: NCCL's own count (or every rank's host),
        the result's host list. None when the log shows only some ranks (one rank's log of many, a log
        without Init lines): its hosts are then a lower bound, ``min_nodes``."""
        att = self.attestation
        if att and att.nnodes:
            return att.nnodes
        if self.result and self.hosts:
            return len(self.hosts)
        return None

    @property
    def min_nodes(self) -> int:
        """Hosts the inputs prove took part (at least this many ran)."""
        return self.nodes or len(self.hosts)

    @property
    def nodes_text(self) -> str:
        """The node count as the inputs support it: '2 nodes', 'at least 1 node (...)', 'unknown'."""
        if self.nodes:
            return f"{self.nodes} node{'s' if self.nodes > 1 else ''}"
        if self.min_nodes:
            plural = "s" if self.min_nodes > 1 else ""
            return f"at least {self.min_nodes} node{plural} (the log lacks the full rank list)"
        return "node count unknown (the log names no hosts)"

    @property
    def ranks(self) -> int | None:
        if self.attestation and self.attestation.nranks:
            return self.attestation.nranks
        if self.result and self.result.metadata.world_size:
            return self.result.metadata.world_size
        return max((s.nranks or 0 for s in self.result.series), default=0) or None if self.result else None


def _expand(paths: Sequence[Path]) -> list[tuple[Path, bool]]:
    """The files to read, each with True when the command line named it (not found under a directory)."""
    files: list[tuple[Path, bool]] = []
    for path in paths:
        if path.is_dir() and (path / RESULT_NAME).is_file():
            files.append((path / RESULT_NAME, True))  # our run directory: the result, which names its logs
        elif path.is_dir():
            # A directory of runs (bench --ab's rounds, tune's candidates, certify's nodes): each run's
            # result with its measured numbers, and every NCCL log (a run's own logs join it below).
            results = sorted(path.rglob(RESULT_NAME))[:_MAX_NESTED_RESULTS]
            # An empty log is a rank that printed nothing (NCCL_DEBUG=VERSION prints on rank 0 only), not
            # a mistake: under a directory it is skipped; named on the command line it is still refused.
            found = sorted(log for log in path.rglob("*.log") if log.stat().st_size > 0)
            if not found and not results:
                raise InputError(f"{path} is a directory without *.log files; pass result or NCCL log files")
            files.extend((f, False) for f in [*results, *found])
        elif not path.exists():
            raise InputError(f"{path}: no such file")
        else:
            files.append((path, True))
    return files


def _not_a_log(where: str, paths: Sequence[Path] = ()) -> InputError:
    if any(_is_hccl_log(p) for p in paths):
        return InputError(
            f"{where} is a Habana Gaudi HCCL log, not NCCL output: doctor reads NCCL_DEBUG=INFO logs; for "
            "Gaudi, read HCCL's own logs (HABANA_LOGS, hcl.log) or run hccl_demo"
        )
    return InputError(
        f"{where} holds no NCCL log lines (NCCL INFO/WARN) and no benchmark table; run with NCCL_DEBUG=INFO"
    )


def _is_hccl_log(path: Path) -> bool:
    """Habana's collective library logs `[HCCL ...]`/`HCCL demo` lines (HabanaAI/hccl_demo issues)."""
    try:
        with path.open("rb") as handle:
            head = handle.read(65536)
    except OSError:
        return False
    return b"HCCL" in head and b"NCCL INFO" not in head and b"NCCL WARN" not in head


def _from_result(path: Path) -> Evidence:
    result = read_run(path)
    attestation = result.attestation
    logs = [Path(p) for p in result.metadata.log_files if Path(p).is_file()]
    if attestation is None and logs:
        attestation = attest_files(logs)
    return Evidence(label=result.label, sources=[str(path)], result=result, attestation=attestation)


def _own_log(log: Path, run: Evidence) -> bool:
    """True when ``log`` is one of the NCCL logs our result names: the same file, or the same name in the
    run directory's ``nccl/`` folder (the directory may have been copied from the GPU host)."""
    if run.result is None or run.result.metadata.engine == "nccl-tests":
        return False
    named = [Path(p) for p in run.result.metadata.log_files]
    if log.resolve() in {p.resolve() for p in named if p.is_absolute()}:
        return True
    run_dir = Path(run.sources[0]).parent
    return log.parent.resolve() == (run_dir / NCCL_LOG_DIR).resolve() and log.name in {p.name for p in named}


def _joins_table_run(run: Evidence, groups: list[LogRun]) -> bool:
    """The logs are the one nccl-tests table run's own when they form one run that does not clash with the
    table file's INFO lines, and either shares its communicator or the table names none (bare output)."""
    table_path = Path(run.sources[0])
    table = LogRun(files=[table_path], members=comm_members(table_path))
    if len(groups) != 1 or groups[0].clashes_with(table):
        return False
    return groups[0].shares_comm_with(table) or not table.comm_ids


def load_evidence(paths: Sequence[Path]) -> list[Evidence]:
    """Turn the command line's files into runs, following the rules in this module's docstring."""
    if not paths:
        raise UsageError("doctor: give at least one result or NCCL log file, or use --preflight")
    runs: list[Evidence] = []
    logs: list[Path] = []
    for path, named in _expand(paths):
        kind = sniff(path)
        if kind != "nccl-tests-text":
            runs.append(_from_result(path))
            continue
        try:
            result = read_run(path)
        except InputError:
            # No table: an NCCL log, or an unrelated text file, which would be judged as a run without
            # output. Named on the command line that is a mistake to report; under a directory, a stray.
            if holds_nccl_lines(path):
                logs.append(path)
            elif named:
                raise _not_a_log(str(path), [path]) from None
            continue
        runs.append(
            Evidence(label=result.label, sources=[str(path)], result=result, attestation=attest_files([path]))
        )
    for run in runs:
        own = [log for log in logs if _own_log(log, run)]
        if own:  # already attested through the result; list them as its sources, judge them once
            run.sources.extend(str(p) for p in own)
            logs = [log for log in logs if log not in own]
            if run.attestation is None:
                run.attestation = attest_files(own)
    if not logs:
        if not runs:
            raise _not_a_log(", ".join(str(p) for p in paths), paths)
        return runs
    groups = group_runs(logs)
    table_runs = [r for r in runs if r.result and r.result.metadata.engine == "nccl-tests"]
    if len(table_runs) == 1 and len(runs) == 1 and _joins_table_run(runs[0], groups):
        run = runs[0]
        run.sources.extend(str(p) for p in groups[0].files)
        run.attestation = attest_files([Path(s) for s in run.sources])
        return runs
    taken = {r.label for r in runs}
    for group in groups:
        label = run_label(group.files, taken)
        sources = [str(p) for p in group.files]
        runs.append(Evidence(label=label, sources=sources, attestation=attest_files(group.files)))
    return runs
