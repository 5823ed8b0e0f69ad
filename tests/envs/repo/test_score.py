"""The reward: the agent's diff on a pristine copy, the hidden tests restored on top, the
comparator behind the tests' gate. Each of the three guards has a test that fails without it."""

from __future__ import annotations

import pytest

from rlvr.envs.repo.compare import compare_patches
from rlvr.envs.repo.score import compose_reward, score_work

pytestmark = pytest.mark.sandbox

FIX = ("a - b", "a + b")


def fixed(task, *, old=FIX[0], new=FIX[1]):
    work = task.pristine()
    work["calc/ops.py"] = work["calc/ops.py"].replace(old, new)
    return work


def test_the_fix_resolves_and_counts_each_test(calc_task, sandbox):
    verdict = score_work(calc_task, fixed(calc_task), sandbox)
    assert verdict.resolved and verdict.reward == pytest.approx(1.0)  # similarity 1: (1 + 0.1) / 1.1
    assert (verdict.f2p_passed, verdict.p2p_passed) == (1, 1)
    assert verdict.diff.startswith("diff --git a/calc/ops.py b/calc/ops.py")
    assert verdict.metrics(calc_task)["patch/similarity"] == 1.0


def test_the_base_is_not_resolved(calc_task, sandbox):
    verdict = score_work(calc_task, calc_task.pristine(), sandbox)
    assert not verdict.resolved and verdict.reward == 0.0 and verdict.p2p_passed == 1


def test_the_diff_goes_on_the_pristine_copy_not_the_work_tree(calc_task, sandbox):
    """Break: apply the diff to `work` instead of `task.pristine()` -> the hunk applies twice
    (does not apply): patch_error, reward 0, and this test fails."""
    work = fixed(calc_task)
    verdict = score_work(calc_task, work, sandbox)
    assert verdict.resolved and "patch_error" not in verdict.flags
    assert calc_task.base["calc/ops.py"].count("a - b") == 1  # the task's own tree is untouched


def test_edits_to_the_hidden_test_files_do_not_survive(calc_task, sandbox):
    """The agent rebinds `add` inside the test file, far from test_patch's hunk, so the hidden
    tests would still apply on top of it. Break: skip the restore in with_hidden_tests -> the
    fake `add` is what the test calls, the task counts as resolved, and this test fails."""
    work = calc_task.pristine()
    work["tests/test_ops.py"] = work["tests/test_ops.py"].replace(
        "from calc.ops import add, neg", "from calc.ops import neg\nadd = lambda a, b: a + b")
    verdict = score_work(calc_task, work, sandbox)
    assert not verdict.resolved and verdict.reward == 0.0 and verdict.f2p_passed == 0


def test_a_new_test_file_of_the_agent_is_not_among_the_tests_run(calc_task, sandbox):
    work = calc_task.pristine()
    work["tests/test_mine.py"] = "from calc.ops import add\n\n\ndef test_add():\n    assert True\n"
    assert not score_work(calc_task, work, sandbox).resolved


def test_a_near_miss_close_to_the_reference_scores_zero(calc_task, sandbox):
    """Break: drop the `resolved` gate of the shaping term -> the near miss gets
    w * similarity / (1 + w) > 0 and this test fails."""
    near = score_work(calc_task, fixed(calc_task, new="a + b + 0 * 1 - 1"), sandbox)
    assert near.comparison.similarity > 0.3 and not near.resolved
    assert near.reward == 0.0
    far_fix = fixed(calc_task, new="sum((a, b))")
    far = score_work(calc_task, far_fix, sandbox)
    assert far.resolved and far.reward > near.reward and far.reward < 1.0


def test_partial_credit_is_the_share_of_tests_passed(calc_task, sandbox):
    verdict = score_work(calc_task, calc_task.pristine(), sandbox, partial=True)
    # tests = 1 of 2 listed passed = 0.5; not resolved, so shaping 0: (1 * 0.5 + 0.1 * 0) / 1.1
    assert verdict.reward == pytest.approx(0.5 / 1.1)


def test_the_comparator_never_outvotes_the_tests_for_any_weight():
    reference = "--- a/m.py\n+++ b/m.py\n@@ -1 +1 @@\n-x\n+y\n"
    for weight in (0.1, 1.0, 10.0):
        for partial in (0.0, 0.5, 0.99):
            unresolved = compose_reward(partial, False, reference, reference, weight).score
            resolved = compose_reward(1.0, True, "--- a/q.py\n+++ b/q.py\n@@ -1 +1 @@\n-a\n+b\n", reference, weight).score
            assert unresolved < resolved


def test_compare_patches_per_file():
    ref = "--- a/m.py\n+++ b/m.py\n@@ -1,2 +1,2 @@\n x\n-y\n+z\n"
    other = ref + "--- a/n.py\n+++ b/n.py\n@@ -1 +1 @@\n-p\n+q\n"
    assert compare_patches(ref, ref).similarity == 1.0
    assert compare_patches(other, ref).similarity == 0.5  # m.py 1.0, n.py (only predicted) 0
    bad = compare_patches("not a diff", ref)
    assert bad.similarity == 0.0 and not bad.parsed
