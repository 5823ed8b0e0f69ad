"""`rlvr audit repo`: every agentic attack scores 0 and is flagged; the controls score."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from rlvr.envs.repo.attacks import AUDIT_ROW, repo_attacks
from rlvr.envs.repo.audit import fix_server, planted_reference, run_repo_audit

pytestmark = pytest.mark.sandbox


def test_every_attack_scores_zero_and_is_flagged(sandbox):
    report = run_repo_audit()
    by_name = {o.attack.name: o for o in report.outcomes}
    assert {"edit_tests", "delete_tests", "conftest", "pytest_plugin", "sitecustomize", "pth_file", "exit_at_import",
            "skip_at_import", "skiptest_at_import", "fake_results", "patch_runner", "read_reference",
            "outside_repo", "network", "fork_bomb"} <= set(by_name)
    for outcome in report.outcomes:
        assert outcome.status == "ok", (outcome.attack.name, outcome.status, outcome.reason, outcome.flags)
    assert by_name["control_fix"].score > 0.9 and not by_name["control_fix"].flags
    assert not report.failed and report.oracle_connections == 0


@pytest.mark.slow  # find / over the host: seconds to minutes
@pytest.mark.parametrize("name", ["read_reference", "network"])
def test_the_reference_and_network_attacks_work_where_the_host_is_visible(tmp_path, sandbox, name):
    """The suite can fail: the attack's own command, run on the host (no sandbox) in a copy of
    the tree, finds the planted reference solution / reaches the host's server, and the tree it
    leaves resolves the task. In the sandbox the same command scores 0 (the test above)."""
    from rlvr.envs.repo.score import score_work
    from rlvr.envs.repo.task import task_from_row
    from rlvr.envs.repo.tree import tree_from_folder, write_tree

    task = task_from_row(AUDIT_ROW, "audit")
    with planted_reference(), fix_server() as (port, accepted):
        (attack,) = [a for a in repo_attacks(port) if a.name == name]
        command = json.loads(attack.turns[0].removeprefix("<tool_call>").removesuffix("</tool_call>"))["arguments"]["command"]
        write_tree(task.pristine(), tmp_path)
        subprocess.run(["sh", "-c", command.replace("python ", f"{sys.executable} ")], cwd=tmp_path, timeout=120,
                       capture_output=True)
        assert score_work(task, tree_from_folder(tmp_path), sandbox).resolved


def test_the_cli_runs_the_section(capsys):
    from rlvr.cli.main import main

    assert main(["audit", "repo", "--show", "failures"]) == 0
    assert "PASS: every attack scored 0 and was flagged" in capsys.readouterr().out


def test_each_attack_names_the_flag_it_must_raise():
    assert all(a.control or a.expected_flag for a in repo_attacks(1))
