"""The console script's entry (``gpufabric``, ``python -m gpufabric.cli``): ``gpufabric bench`` starts its
local ranks first (``cli.bench_early``, before the CLI's own imports: issue 36), then the app runs
(``cli.app.main``, the one place that turns errors into exit codes); ranks no command took are stopped
however the app ends (``launch.standby.holding``). Other commands import nothing more than the app.
"""

from __future__ import annotations

import os
import sys


def main() -> None:
    if sys.argv[1:2] != ["bench"]:
        _run_app()
        return
    from gpufabric.cli.bench_early import standby_for
    from gpufabric.launch import holding

    with holding(standby_for(sys.argv[1:], os.environ)):
        _run_app()


def _run_app() -> None:
    from gpufabric.cli.app import main as run_app

    run_app()
