"""The reward of a repository episode: the agent's diff on a pristine copy, the hidden tests on top.

1. `diff = diff_trees(base, work)`: what `git diff` against the base commit shows.
2. The diff is applied to a pristine copy of the base (`task.pristine()`), never to the tree
   the agent worked in: what is scored is exactly the patch that is logged and compared.
3. Every file the hidden tests (`test_patch`) touch is restored to its base state (or removed
   if the base lacks it), then `test_patch` is applied: the agent's edits to those test files
   do not survive, and its own copies of the tests are never run.
4. FAIL_TO_PASS and PASS_TO_PASS run with the per-test harness (`hidden_tests.run_tests`).

    tests = 1 if every listed test passed else 0            (partial: passed / listed)
    reward = Composite(parts=[("tests", tests, 1), ("shaping", gated_similarity, w)])
    gated_similarity = Composite(parts=[("patch_similarity", sim, 1)], gates=[("resolved", resolved, 1)])

so the comparator adds at most w / (1 + w) and only to a patch that resolves the task: an
unresolved patch can never out-score a resolved one, however close it is to the reference.
"""

from __future__ import annotations

from dataclasses import dataclass

from rlvr.envs.repo.compare import PatchComparison, compare_patches, patch_similarity
from rlvr.envs.repo.hidden_tests import HiddenTestError, SuiteRun, run_tests
from rlvr.envs.repo.patches import PatchError, apply_patch, diff_trees, touched_files
from rlvr.envs.repo.task import RepoTask
from rlvr.envs.repo.tree import Tree
from rlvr.rewards.compose import Composite
from rlvr.rewards.sandbox import Sandbox
from rlvr.rewards.verdict import Verdict


@dataclass(frozen=True)
class RepoVerdict:
    """What one submission scored.

    Attributes:
        reward: the composed reward (module docstring).
        resolved: every FAIL_TO_PASS and PASS_TO_PASS test passed.
        diff: the agent's patch against the base.
        f2p_passed, p2p_passed: tests of each list that passed (of len(task.FAIL_TO_PASS), ...).
        run: per-test outcomes (None when nothing could run).
        comparison: the patch comparator's view (None without a reference patch).
        flags: "patch_error", "tests_error", and the harness's flags.
        reason: one line for people.
    """

    reward: float
    resolved: bool
    diff: str
    f2p_passed: int
    p2p_passed: int
    run: SuiteRun | None
    comparison: PatchComparison | None
    flags: tuple[str, ...]
    reason: str

    def metrics(self, task: RepoTask) -> dict[str, float]:
        out = {"repo/resolved": float(self.resolved), "repo/f2p_passed": float(self.f2p_passed),
               "repo/f2p_total": float(len(task.fail_to_pass)), "repo/p2p_passed": float(self.p2p_passed),
               "repo/p2p_total": float(len(task.pass_to_pass)), "repo/patch_error": float("patch_error" in self.flags)}
        return {**out, **(self.comparison.metrics() if self.comparison else {})}


def with_hidden_tests(task: RepoTask, tree: Tree) -> Tree:
    """`tree` with the files of `test_patch` restored to base, then `test_patch` applied."""
    restored = dict(tree)
    for path in touched_files(task.test_patch):
        if path in task.base:
            restored[path] = task.base[path]
        else:
            restored.pop(path, None)
    return apply_patch(restored, task.test_patch)


def tree_to_score(task: RepoTask, diff: str) -> Tree:
    """The tree the hidden tests run on: the pristine base, the diff, the hidden tests (1-3)."""
    patched = apply_patch(task.pristine(), diff) if diff else task.pristine()
    return with_hidden_tests(task, patched)


def score_work(task: RepoTask, work: Tree, sandbox: Sandbox, *, partial: bool = False,
               similarity_weight: float = 0.1) -> RepoVerdict:
    """Score the agent's final tree `work` (see the module docstring)."""
    diff = diff_trees(task.base, work)
    comparison = compare_patches(diff, task.patch) if task.patch.strip() else None
    try:
        tree = tree_to_score(task, diff)
        run = run_tests(sandbox, tree, list(task.test_ids))
    except PatchError as error:
        return _unscored(diff, comparison, "patch_error", f"the patch does not apply: {error}")
    except HiddenTestError as error:
        return _unscored(diff, comparison, "tests_error", f"the tests cannot run: {error}")
    f2p, p2p = run.passed(task.fail_to_pass), run.passed(task.pass_to_pass)
    resolved = run.all_passed(task.test_ids)
    tests = (f2p + p2p) / len(task.test_ids) if partial else float(resolved)
    reward = compose_reward(tests, resolved, diff, task.patch, similarity_weight)
    reason = (f"{'resolved' if resolved else 'not resolved'}: FAIL_TO_PASS {f2p}/{len(task.fail_to_pass)}, "
              f"PASS_TO_PASS {p2p}/{len(task.pass_to_pass)}")
    return RepoVerdict(reward.score, resolved, diff, f2p, p2p, run, comparison, run.flags, reason)


def _unscored(diff: str, comparison, flag: str, reason: str) -> RepoVerdict:
    return RepoVerdict(0.0, False, diff, 0, 0, None, comparison, (flag,), reason)


def compose_reward(tests: float, resolved: bool, diff: str, reference: str, weight: float) -> Verdict:
    """The hybrid of the module docstring (weight 0 or no reference: the tests alone)."""
    tests_part = lambda response, gold: Verdict(tests, "hidden tests")  # noqa: E731
    if weight <= 0 or not reference.strip():
        return Composite(parts=[("tests", tests_part, 1.0)])(response=diff, gold="")
    resolved_gate = lambda response, gold: Verdict(float(resolved), "resolved")  # noqa: E731
    shaping = Composite(parts=[("patch_similarity", patch_similarity, 1.0)],
                        gates=[("resolved", resolved_gate, 1.0)])
    hybrid = Composite(parts=[("tests", tests_part, 1.0), ("shaping", shaping, weight)])
    return hybrid(response=diff, gold=reference)
