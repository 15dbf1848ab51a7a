"""``gpufabric --help`` lists the commands in the order the areas register them; ``plan`` lives in its own
module (cli/plan.py) but stays where users find it, right after ``catalog``."""

from __future__ import annotations

from gpufabric.cli.app import app


def test_commands_are_listed_in_their_documented_order() -> None:
    names = [command.name for command in app.registered_commands]
    assert names == [
        "bench", "compare", "report", "show", "catalog", "plan", "doctor", "launch", "nodes", "isolate",
        "certify", "train-bench", "tune", "env", "snapshot", "expect", "watch",
    ]  # fmt: skip
