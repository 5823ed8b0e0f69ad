"""CoT-pass@k: pass@k that credits a sample only when its answer is right AND its reasoning is.

Wen et al. 2025 ("Reinforcement Learning with Verifiable Rewards Implicitly Incentivizes
Correct Reasoning in Base LLMs", arXiv:2506.14245) observe that pass@k credits right answers
reached by wrong reasoning, which flatters base models at large k. For a prompt with n samples
of which D have both a correct final answer and reasoning judged correct, the per-prompt
estimate is the unbiased pass@k estimator (Chen et al. 2021, eq. 1) applied to D:

    CoT-pass@k = 1 - C(n - D, k) / C(n, k)            (passk.py computes it without overflow)

and the metric is its mean over prompts. Since D <= c (the answer-correct count) and pass@k is
increasing in c, CoT-pass@k <= pass@k prompt by prompt, so the gap pass@k - CoT-pass@k is a
paired quantity: it is reported with a paired bootstrap interval over prompts (confidence.py).

A judgement of a sample's reasoning is a probability p (the judge's P(yes), or 0/1 for a hand
label) and the decision p >= threshold. A sample whose answer is wrong never counts, whatever
its reasoning; the four cells (answer right/wrong x reasoning right/wrong) are counted so that
"right answer, wrong reasoning" (what pass@k over-credits) is visible as a number.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from rlvr.evaluate.confidence import bootstrap_mean, paired_difference
from rlvr.evaluate.groups import PromptGroup
from rlvr.evaluate.passk import pass_at_k_per_prompt
from rlvr.evaluate.summary import EvalError, check_ks, pass_values


@dataclass(frozen=True)
class CotJudgement:
    """The judge's view of one sample's reasoning: p = P(reasoning right) in [0, 1];
    right = p >= the threshold it was judged at."""

    p: float
    right: bool


Judged = Sequence[Sequence[CotJudgement]]  # one judgement per sample, groups x members


def judgement(p: float, threshold: float) -> CotJudgement:
    return CotJudgement(float(p), bool(p >= threshold))


def check_aligned(groups: Sequence[PromptGroup], judged: Judged) -> None:
    """One judgement per sample of every group; else an EvalError naming the first mismatch."""
    if len(groups) != len(judged):
        raise EvalError(f"CoT judgements for {len(judged)} prompts, but {len(groups)} prompts were evaluated")
    for g, j in zip(groups, judged):
        if len(j) != g.n:
            raise EvalError(f"prompt {g.prompt!r} ({g.source}): {len(j)} CoT judgements for {g.n} samples")


def cot_counts(groups: Sequence[PromptGroup], judged: Judged) -> tuple[np.ndarray, np.ndarray]:
    """(n (P,), D (P,)): samples, and samples right in answer and reasoning, of each prompt."""
    check_aligned(groups, judged)
    return (np.array([g.n for g in groups], dtype=np.int64),
            np.array([sum(m.score >= 1.0 and j.right for m, j in zip(g.members, js))
                      for g, js in zip(groups, judged)], dtype=np.int64))


def cot_pass_values(groups: Sequence[PromptGroup], judged: Judged, k: int) -> np.ndarray:
    """Per-prompt CoT-pass@k (P,)."""
    n, d = cot_counts(groups, judged)
    return pass_at_k_per_prompt(n, d, k)


def cells(groups: Sequence[PromptGroup], judged: Judged) -> dict[str, int]:
    """Samples in each (answer, reasoning) cell, over all prompts."""
    check_aligned(groups, judged)
    pairs = [(m.score >= 1.0, j.right) for g, js in zip(groups, judged) for m, j in zip(g.members, js)]
    return {"answer_right_reasoning_right": sum(a and r for a, r in pairs),
            "answer_right_reasoning_wrong": sum(a and not r for a, r in pairs),
            "answer_wrong_reasoning_right": sum(r and not a for a, r in pairs),
            "answer_wrong_reasoning_wrong": sum(not a and not r for a, r in pairs)}


def summarize_cot(groups: Sequence[PromptGroup], judged: Judged, ks: Sequence[int], *, seed: int = 0) -> dict:
    """pass@k, CoT-pass@k and their paired gap for each k, the four cells, per-prompt D."""
    check_ks(groups, ks)
    est = lambda values: bootstrap_mean(values, seed=seed).as_dict()  # noqa: E731
    n, d = cot_counts(groups, judged)
    return {
        "pass_at_k": {str(k): est(pass_values(groups, k)) for k in ks},
        "cot_pass_at_k": {str(k): est(pass_at_k_per_prompt(n, d, k)) for k in ks},
        "pass_minus_cot": {str(k): paired_difference(pass_at_k_per_prompt(n, d, k), pass_values(groups, k),
                                                     seed=seed).as_dict() for k in ks},
        "samples": cells(groups, judged),
        "per_prompt_correct_cot": [int(x) for x in d],
    }


def compare_cot(groups_a: Sequence[PromptGroup], judged_a: Judged, groups_b: Sequence[PromptGroup],
                judged_b: Judged, ks: Sequence[int], *, seed: int = 0) -> dict[str, dict]:
    """Paired B - A differences of CoT-pass@k for each k (the prompts are checked by compare.py)."""
    return {str(k): paired_difference(cot_pass_values(groups_a, judged_a, k), cot_pass_values(groups_b, judged_b, k),
                                      seed=seed).as_dict() for k in ks}


@dataclass(frozen=True)
class CotInput:
    """What a CoT evaluation adds to `write_evaluation`: the judgements of each side and how
    they were made (recorded in results.json as `cot_settings`)."""

    judged: Judged
    judged_compare: Judged | None
    judge: str
    threshold: float
    question: str
