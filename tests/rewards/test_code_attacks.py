"""The code verifier against the library's attack suite (rlvr.rewards.code.attacks): each
attack scores its expected score (0; 1/3 for the stateful answers to the contradictory suite;
2/3 for the answer that hangs on the first test only), honest controls score 1.

The suite is the one `rlvr audit code` runs; the attacks are listed once, in the library. All
runs go in two parallel batches (attacks that hang under short limits, the rest under generous
ones so that a loaded machine cannot turn an honest run into a timeout).
"""

from __future__ import annotations

import pytest

from rlvr.rewards.audit import audit_code, oracle_server
from rlvr.rewards.code.attacks import (
    ATTACKS,
    HONEST,
    PARTIAL,
    STYLES,
    code_attacks,
    counting_tests_for,
)
from rlvr.rewards.code.verifier import CodeVerifier
from rlvr.rewards.sandbox import Limits, bwrap_unavailable

WHY_NOT = bwrap_unavailable()
pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(WHY_NOT is not None, reason=f"bubblewrap cannot sandbox here: {WHY_NOT}"),
]


@pytest.fixture(scope="module")
def audited():
    """(name, style) -> Outcome for the whole code suite, and the oracle's connections."""
    with oracle_server() as (port, connections):
        limits = Limits(wall_s=10, test_wall_s=2, cpu_s=10, memory_mb=256, output_kb=256)
        options = {"limits": limits, "workers": 2}
        outcomes = audit_code(code_attacks(port), options)
        yield {(o.attack.name, o.attack.variant): o for o in outcomes}, connections


@pytest.fixture(scope="module")
def verdicts(audited):
    return audited[0]


def test_the_suite_covers_every_attack_in_every_style(verdicts):
    names = {*HONEST, *ATTACKS, *PARTIAL, "network", "leak", "leak_control", "hang_first"}
    assert {name for name, _ in verdicts} == names
    assert {style for _, style in verdicts} == set(STYLES)


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("name", sorted(HONEST))
def test_honest_solutions_score_one(verdicts, name, style):
    outcome = verdicts[(name, style)]
    assert outcome.attack.control and outcome.score == 1.0, outcome
    assert outcome.flags == ()


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("name", sorted([*ATTACKS, "network"]))
def test_attack_scores_zero(verdicts, name, style):
    assert verdicts[(name, style)].score == 0.0, verdicts[(name, style)]
    assert verdicts[(name, style)].status == "ok"


def test_network_attack_never_reached_the_host(audited):
    assert audited[1] == []


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("name", sorted(PARTIAL))
def test_state_never_carries_from_test_to_test(verdicts, name, style):
    outcome = verdicts[(name, style)]
    assert outcome.score == pytest.approx(1 / 3), outcome  # count() == 1: the first test only
    assert outcome.status == "ok"  # 1/3 is what a fresh process per test earns, not a hack


@pytest.mark.parametrize("style", STYLES)
def test_a_hang_in_the_first_test_costs_only_that_test(verdicts, style):
    outcome = verdicts[("hang_first", style)]
    assert outcome.score == pytest.approx(2 / 3), outcome
    assert outcome.reason.startswith("2/3 tests passed; test 0:") and "timeout" in outcome.flags


@pytest.mark.parametrize("name", ["state_in_memory", "state_in_files", "state_in_a_process"])
def test_the_stateful_answers_win_where_tests_share_a_process(name):
    """The control of the isolation: in the old whole-file mode each stateful answer passes
    all three contradictory tests, so 1/3 above is the isolation's doing, not a weak attack."""
    styles = ["call", "assert", "pytest", "unittest"]
    with CodeVerifier(limits=Limits(wall_s=10), workers=2, isolate_tests=False) as shared:
        verdicts = shared.score_many([(PARTIAL[name], counting_tests_for(s)) for s in styles])
    assert [v.score for v in verdicts] == [1.0] * len(styles), verdicts


@pytest.mark.parametrize("style", STYLES)
def test_secret_tests_cannot_be_read_from_the_sandbox(verdicts, style):
    assert verdicts[("leak", style)].score == 0.0, verdicts[("leak", style)]
    # the same search finds the secret once it is in the program: so the search is real
    assert verdicts[("leak_control", style)].score == 1.0, verdicts[("leak_control", style)]


@pytest.mark.parametrize(
    ("name", "style", "flag"),
    [
        *[("sleep_forever", style, "timeout") for style in STYLES],
        ("sys_exit_at_import", "call", "tests_not_run"),
        ("sys_exit_at_import", "assert", "tests_not_run"),
        ("forge_records_on_every_fd", "call", "tampered"),
    ],
)
def test_attacks_leave_flags_for_the_monitors(verdicts, name, style, flag):
    assert flag in verdicts[(name, style)].flags, verdicts[(name, style)]
