"""A fabric A/B (``analysis.ab_judge.ABReport``) as text: the seeds' speed-up table, the verdict, the
proof of each side's transport, and each side against its own ceiling (``expected_lines``); an A/B of two
configurations names its sides (A, B or ``--ab-names``) and gives B's verdict at every size. ``table``
and ``markdown`` are the same markdown document (it reads well in a terminal and pastes into
docs/benchmarks.md); ``json`` is the whole report, runs included.
The speed-up tables themselves are ``report.compare_render``'s.
"""

from __future__ import annotations

from gpufabric.analysis.ab_equivalence import Equivalence
from gpufabric.analysis.ab_judge import ABReport
from gpufabric.report.compare_render import to_markdown
from gpufabric.report.expected_lines import ab_expected_lines
from gpufabric.report.formats import Format
from gpufabric.units import human_size


def ab_markdown(report: ABReport) -> str:
    runs = report.runs
    off_env = " ".join(f"{k}={v}" for k, v in sorted(runs.off_env.items()))
    unset = f"; removed: {', '.join(runs.off_unset)}" if runs.off_unset else ""
    # On gloo ranks the profiles were set but switched nothing: say so next to what they would have done.
    ignored = f" [the {runs.fabric} profile, ignored by gloo]" if report.caveat else ""
    if report.equivalence is not None:  # two configurations: the sides by their names, A the reference
        head = [
            f"## A/B of two configurations: {runs.on.label} vs {runs.off.label}",
            "",
            f"- A = {runs.on.label}: {runs.on_description} (the reference)",
            f"- B = {runs.off.label}: {runs.off_description}",
        ]
    else:
        head = [
            f"## Fabric A/B: {report.fabric}",
            "",
            f"- {runs.on.label}: {runs.on_description or 'the environment as given'}{ignored}",
            f"- {runs.off.label}: {runs.off_description} ({off_env or 'no variables set'}{unset}){ignored}",
        ]
    lines = [
        *head,
        f"- {runs.rounds} round(s), ABBA order, {len(runs.order)} jobs; samples pooled per side; "
        f"runs in {runs.root}",
        "",
        "### Verdict",
        "",
        *(f"- {line}" for line in report.verdict),
        *(_size_verdicts(report.equivalence) if report.equivalence is not None else []),
        "",
        "### Each side's transport",
        "",
        "| side | A/B proof | cause | doctor |",
        "|------|-----------|-------|--------|",
    ]
    for side in report.sides:
        failing = [c.id for c in side.doctor.checks if c.verdict.value in ("fail", "warn")]
        doctor = side.doctor.verdict.value.upper() + (f" ({', '.join(failing)})" if failing else "")
        fix = f" Fix: {side.proof.fix}" if side.proof.fix and side.proof.verdict.value == "fail" else ""
        lines.append(
            f"| {side.side} | {side.proof.verdict.value.upper()} | {side.proof.cause}{fix} | {doctor} |"
        )
    judged = ab_expected_lines([(side.side, side.expected) for side in report.sides])
    if judged:
        lines += ["", "### Each side against its own ceiling", "", *(f"- {line}" for line in judged)]
    lines += ["", to_markdown(report.comparison)]
    return "\n".join(lines).rstrip() + "\n"


def _size_verdicts(equivalence: Equivalence) -> list[str]:
    """B against A at every size: the ratio, its 95% interval and the verdict there."""
    b = equivalence.b_name
    lines = ["", f"| collective | size | {b} / {equivalence.a_name} busbw | 95% interval | verdict |"]
    lines.append("|---|---|---|---|---|")
    for size in equivalence.sizes:
        ratio = f"{size.b_over_a:.3f}" if size.b_over_a is not None else "-"
        interval = (
            f"{size.low:.3f}-{size.high:.3f}" if size.low is not None and size.high is not None else "-"
        )
        lines.append(
            f"| {size.collective} | {human_size(size.size_bytes)} | {ratio} | {interval} | {size.outcome} |"
        )
    return lines


def render_ab(report: ABReport, fmt: Format) -> str:
    """The A/B in ``fmt``: ``json`` the whole document, ``table`` and ``markdown`` the markdown report."""
    if Format(fmt) is Format.JSON:
        return report.model_dump_json(indent=2) + "\n"
    return ab_markdown(report)
