"""The last line of a test run on a machine without bubblewrap counts the skipped sandbox tests
and names the command that enables them (tests/conftest.py, issue 10)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import SimpleNamespace

spec = importlib.util.spec_from_file_location("root_conftest", Path(__file__).with_name("conftest.py"))
conftest = importlib.util.module_from_spec(spec)
spec.loader.exec_module(conftest)


class Reporter:
    def __init__(self, reasons):
        self.stats = {"skipped": [SimpleNamespace(longrepr=("f.py", 1, f"Skipped: {r}")) for r in reasons]}
        self.lines = []

    def write_line(self, line):
        self.lines.append(line)


def unconfigure(reasons) -> list[str]:
    reporter = Reporter(reasons)
    config = SimpleNamespace(pluginmanager=SimpleNamespace(get_plugin=lambda name: reporter))
    conftest.pytest_unconfigure(config)
    return reporter.lines


def test_the_sandbox_skips_are_counted_with_the_enabling_command():
    why = "bubblewrap cannot sandbox here: bwrap: `bwrap` is not installed"
    [line] = unconfigure([why, why, "peft is not installed", why])
    assert line.startswith("3 sandbox tests skipped (bwrap: `bwrap` is not installed)")
    assert "`sudo apt-get install bubblewrap`" in line


def test_nothing_is_printed_when_no_sandbox_test_was_skipped():
    assert unconfigure(["peft is not installed"]) == [] and unconfigure([]) == []
