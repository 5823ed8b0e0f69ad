"""Two models (or a checkpoint before and after training) on the same prompts and seeds.

Every difference is B minus A, prompt by prompt, with a paired bootstrap interval over prompts
(confidence.paired_difference). Per-prompt changes:

    solved: A never correct (c_A = 0), B correct at least once (c_B > 0)
    lost:   A correct at least once, B never
    better / worse: B's pass rate c_B / n_B above / below A's
"""

from __future__ import annotations

from typing import Sequence

from rlvr.evaluate.confidence import paired_difference
from rlvr.evaluate.groups import PromptGroup
from rlvr.evaluate.summary import EvalError, check_ks, maj_values, pass_values


def check_same_prompts(groups_a: Sequence[PromptGroup], groups_b: Sequence[PromptGroup]) -> None:
    """Both sides must hold the same prompts in the same order; else an EvalError naming the first mismatch."""
    if len(groups_a) != len(groups_b):
        raise EvalError(f"compare needs the same prompts on both sides, got {len(groups_a)} and {len(groups_b)}")
    for i, (a, b) in enumerate(zip(groups_a, groups_b)):
        if a.prompt != b.prompt or a.gold != b.gold:
            raise EvalError(f"compare: prompt {i} differs ({a.prompt!r} vs {b.prompt!r})")


def prompt_changes(groups_a: Sequence[PromptGroup], groups_b: Sequence[PromptGroup]) -> dict:
    """Counts and lists of per-prompt changes from A to B (see the module docstring)."""
    rows = [{"prompt": a.prompt, "gold": a.gold, "pass_rate_a": a.pass_rate, "pass_rate_b": b.pass_rate}
            for a, b in zip(groups_a, groups_b)]
    solved = [r for r, a, b in zip(rows, groups_a, groups_b) if a.correct == 0 and b.correct > 0]
    lost = [r for r, a, b in zip(rows, groups_a, groups_b) if a.correct > 0 and b.correct == 0]
    return {"solved": len(solved), "lost": len(lost),
            "better": sum(r["pass_rate_b"] > r["pass_rate_a"] for r in rows),
            "worse": sum(r["pass_rate_b"] < r["pass_rate_a"] for r in rows),
            "same": sum(r["pass_rate_b"] == r["pass_rate_a"] for r in rows),
            "solved_prompts": solved, "lost_prompts": lost}


def compare_groups(groups_a: Sequence[PromptGroup], groups_b: Sequence[PromptGroup], ks: Sequence[int],
                   *, seed: int = 0) -> dict:
    """Paired differences (B - A) of pass@k and maj@k for each k, and the per-prompt changes."""
    check_same_prompts(groups_a, groups_b)
    check_ks(groups_a, ks)
    check_ks(groups_b, ks)
    diff = lambda fn, k: paired_difference(fn(groups_a, k), fn(groups_b, k), seed=seed).as_dict()  # noqa: E731
    return {"pass_at_k_diff": {str(k): diff(pass_values, k) for k in ks},
            "maj_at_k_diff": {str(k): diff(maj_values, k) for k in ks},
            "changes": prompt_changes(groups_a, groups_b)}


def align_by_prompt(groups_a: Sequence[PromptGroup], groups_b: Sequence[PromptGroup]) -> list[PromptGroup]:
    """B's groups reordered to A's prompt order (two samples files may list prompts differently);
    an EvalError when the two do not hold the same set of prompts."""
    by_prompt = {g.prompt: g for g in groups_b}
    missing = [g for g in groups_a if g.prompt not in by_prompt]
    extra = set(by_prompt) - {g.prompt for g in groups_a}
    if missing or extra:
        example = missing[0].prompt if missing else sorted(extra)[0]
        raise EvalError(f"compare needs the same prompts on both sides: {len(missing)} only in the first, "
                        f"{len(extra)} only in the second (e.g. {example!r})")
    return [by_prompt[g.prompt] for g in groups_a]
