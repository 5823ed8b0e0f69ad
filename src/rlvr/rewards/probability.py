"""Probability reward (RLPR; Yu et al. 2025, arXiv:2506.18254, Section 2.2).

For tasks without a checker: the policy's own probability of the *reference* answer, after its
own reasoning. A response o = z || y is split into reasoning z (everything up to and including
the last answer marker, "<answer>" or "\\boxed{") and its answer y; y is replaced by the
reference y*, and with the current policy weights pi_theta (no gradient):

    o' = z || y*,   p_i = pi_theta(o'_i | q, o'_<i)   for the tokens o'_i of y*
    r  = (1 / |y*|) * sum_{i in y*} p_i                        (the mean, the paper's f_seq)

Debiasing (`debias=True`, the paper's default, one more forward): the same mean probability of
y* decoded right after the question, with no reasoning, r' = f_seq({pi_theta(y*_i | q, y*_<i)}),
is subtracted, so that only what the reasoning adds is rewarded:

    r_hat = clip(r - r', 0, 1)

The equation numbers of the paper are not quoted here (only summaries of its text were at
hand); the two formulas above are its probability reward and its debiased reward.

Tokenisation: q || z and y* are tokenised separately and concatenated, so the scored tokens are
exactly those of y* (with a BPE tokenizer the boundary may tokenise differently from the
joint text; for a character tokenizer it is identical). A response without an answer marker
scores 0 with the flag `unparsed`. The paper's standard-deviation filtering of prompts is a
sampling rule, not part of the reward, and is not implemented here.
"""

from __future__ import annotations

import torch

from rlvr.errors import RewardError
from rlvr.rewards.verdict import Verdict

MARKERS = ("<answer>", "\\boxed{")


def reasoning_prefix(response: str, markers: tuple[str, ...] = MARKERS) -> str | None:
    """z: the response up to and including its last answer marker; None if it has none."""
    ends = [response.rfind(m) + len(m) for m in markers if m in response]
    return response[:max(ends)] if ends else None


@torch.no_grad()
def mean_token_probability(model, context_ids: list[int], answer_ids: list[int]) -> float:
    """(1 / |a|) * sum_i pi(a_i | context, a_<i) from one forward pass over context || a."""
    device = next(model.parameters()).device
    ids = torch.tensor([context_ids + answer_ids], device=device)  # (1, C + A)
    logits = model(input_ids=ids).logits[0, len(context_ids) - 1: -1].float()  # (A, V)
    probs = torch.softmax(logits, dim=-1).gather(1, torch.tensor(answer_ids, device=device)[:, None])
    return float(probs.mean())


class ProbabilityReward:
    """`reward.verifier = "probability"`: RLPR's reward from the policy (model, tokenizer)."""

    needs_prompt = True  # called as fn(response, gold, prompt=...) (orchestrate/scoring.py)

    def __init__(self, model, tokenizer, *, debias: bool = True, markers: tuple[str, ...] = MARKERS):
        self.model, self.tokenizer, self.debias, self.markers = model, tokenizer, debias, markers

    def _ids(self, text: str) -> list[int]:
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    def __call__(self, response: str, gold: str, *, prompt: str | None = None) -> Verdict:
        if prompt is None:
            raise RewardError("the probability reward needs the prompt; this caller passed none")
        reference = self._ids(gold)
        if not reference:
            raise RewardError("the probability reward needs a non-empty reference answer (gold)")
        z = reasoning_prefix(response, self.markers)
        if z is None:
            return Verdict(0.0, f"no answer marker ({', '.join(self.markers)}) in the response", ("unparsed",))
        r = self._probability(self._ids(prompt + z), reference)
        if not self.debias:
            return Verdict(r, f"mean P(reference)={r:.4f}")
        r_bare = self._probability(self._ids(prompt), reference)
        score = min(max(r - r_bare, 0.0), 1.0)
        return Verdict(score, f"mean P(reference)={r:.4f} after the reasoning, {r_bare:.4f} without")

    def _probability(self, context: list[int], reference: list[int]) -> float:
        if not context:
            raise RewardError("the probability reward needs a non-empty prompt")
        limit = getattr(self.model.config, "max_position_embeddings", None)
        if limit is not None and len(context) + len(reference) > limit:
            raise RewardError(f"probability reward: prompt, reasoning and reference take "
                              f"{len(context) + len(reference)} tokens, over the model's context of {limit}")
        was_training = self.model.training
        self.model.eval()  # no dropout in the reward; the trainer's mode is restored after
        try:
            return mean_token_probability(self.model, context, reference)
        finally:
            self.model.train(was_training)
