"""The thin CLI: parse flags, call the public API, render. One handler turns errors into one line.

Each area registers its commands from its own module (bench.py, results.py, catalog.py, plan.py,
doctor.py, launch.py ...), so this file only wires them together and owns the error handling.
"""

from __future__ import annotations

import re
import sys
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup

import gpufabric
from gpufabric.cli import (
    bench,
    catalog,
    certify,
    doctor,
    env,
    expect,
    isolate,
    launch,
    nodes,
    plan,
    results,
    snapshot,
    train,
    tune,
    watch,
)
from gpufabric.errors import GpufabricError
from gpufabric.launch import Interrupted, stopping_on_signals
from gpufabric.redact import scrubbed_std_streams


def _flags_as_flags(params: list[Any]) -> None:
    """An on/off flag (``--graph``, ``--check/--no-check``) is shown as a flag, without the ``<bool>`` that
    made users write ``--strict true`` (which a flag refuses)."""
    for param in params:
        if getattr(param, "is_flag", False) and param.metavar is None:
            param.metavar = ""


class _Command(TyperCommand):
    """Every command, with its flags shown as flags."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _flags_as_flags(self.params)

    def get_help_option(self, ctx: Any) -> Any:
        option = super().get_help_option(ctx)
        _flags_as_flags([option])
        return option


class _Group(TyperGroup):
    """The root, with its flags shown as flags."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _flags_as_flags(self.params)

    def get_help_option(self, ctx: Any) -> Any:
        option = super().get_help_option(ctx)
        _flags_as_flags([option])
        return option


app = typer.Typer(
    cls=_Group,
    name="gpufabric",
    help="Turn on, prove and measure the fastest GPU interconnect a cluster has.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:  # read only here: the version's lookup (importlib.metadata) costs every command ~0.1 s
        print(f"gpufabric {gpufabric.__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version."
    ),
) -> None:
    """gpufabric: plan, launch, bench, doctor, compare, report."""


for module in (
    bench,
    results,
    catalog,
    plan,
    doctor,
    launch,
    nodes,
    isolate,
    certify,
    train,
    tune,
    env,
    snapshot,
    expect,
    watch,
):
    module.register(app)
for _info in app.registered_commands:
    if _info.cls in (None, TyperCommand):
        _info.cls = _Command


def main() -> None:
    """Console-script entry point: the only place that turns errors into exit codes.

    SIGINT, SIGTERM and SIGHUP become ``Interrupted`` (see ``launch.signals``): the launchers stop every
    rank on the way out, and the exit code is the shell's for that signal (130, 143, 129). Everything
    printed goes through ``redact.scrubbed_std_streams``: secrets never reach the terminal or a log."""
    with scrubbed_std_streams():
        _run()


# typer vendors click (0.29+) or imports it (older): its usage error is reached through the public
# BadParameter, whose parent it is, so both spellings are caught without importing a private module.
_CLICK_USAGE_ERROR: type[Exception] = typer.BadParameter.__mro__[1]
# pydantic's wording of typer's range checks, as users read the rest of our errors.
_RANGE_WORDS = (
    (re.compile(r"Input should be greater than or equal to (\S+)"), r"must be at least \1"),
    (re.compile(r"Input should be less than or equal to (\S+)"), r"must be at most \1"),
    (re.compile(r"Input should be greater than (\S+)"), r"must be more than \1"),
    (re.compile(r"Input should be less than (\S+)"), r"must be less than \1"),
    (re.compile(r"Input should be a valid integer.*"), "must be a whole number"),
    (re.compile(r"Input should be a valid number.*"), "must be a number"),
)


def usage_line(exc: Exception) -> str:
    """A bad flag as one line, like every other error: what, where, and where the valid flags are.

    ``Invalid value for '-n' / '--iters': Input should be greater than or equal to 1`` in a box becomes
    ``-n/--iters: must be at least 1 (flags: gpufabric bench -h)``."""
    message = " ".join(str(getattr(exc, "format_message", lambda: str(exc))()).split())
    for pattern, words in _RANGE_WORDS:
        message = pattern.sub(words, message)
    invalid = re.match(r"Invalid value for (?P<flags>.+?): (?P<why>.*)$", message)
    if invalid:
        flags = "/".join(re.findall(r"'([^']+)'", invalid["flags"])) or invalid["flags"]
        message = f"{flags}: {invalid['why']}"
    names: list[str] = []
    ctx = getattr(exc, "ctx", None)
    while ctx is not None and ctx.parent is not None:  # the root's own name may be `python -m ...`
        names.insert(0, ctx.info_name)
        ctx = ctx.parent
    return f"{message} (flags: {' '.join(['gpufabric', *names])} -h)"


def _run() -> None:
    try:
        with stopping_on_signals():
            code = app(standalone_mode=False)
        sys.exit(code if isinstance(code, int) else 0)  # as click's standalone mode ends, success included
    except _CLICK_USAGE_ERROR as exc:
        if str(exc).strip():  # a bare `gpufabric` printed its help and has nothing to add
            print(f"Error: {usage_line(exc)}", file=sys.stderr)
        sys.exit(2)
    except typer.Abort:
        sys.exit(1)
    except GpufabricError as exc:
        message = " ".join(str(exc).split("\n"))
        print(f"Error: {message}", file=sys.stderr)
        sys.exit(exc.exit_code)
    except OSError as exc:
        if exc.filename is None:
            raise  # not about a path the user gave: a bug, keep its traceback
        # A path the OS refused before any check could word it (e.g. a name over 255 bytes): one line.
        name = str(exc.filename)
        where = name if len(name) <= 80 else f"{name[:60]}... ({len(name)} characters)"
        print(f"Error: {where}: {exc.strerror or exc}", file=sys.stderr)
        sys.exit(2)
    except Interrupted as exc:
        ranks = f"{exc.stopped_ranks} rank{'' if exc.stopped_ranks == 1 else 's'}"
        print(f"Error: interrupted: stopped {ranks} ({exc.signal_name})", file=sys.stderr)
        sys.exit(exc.exit_code)


if __name__ == "__main__":  # python -m gpufabric.cli.app, as well as python -m gpufabric.cli
    main()
