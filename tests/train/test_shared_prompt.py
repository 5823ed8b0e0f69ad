"""The shared-prompt forward (rlvr.train.shared_prompt) against the plain one on the tiny model:
the same log-probs up to float32 rounding, and the same bits every time it runs, whatever ran
in between (no cache or mask kept from an earlier call)."""

from __future__ import annotations

import torch

from rlvr.train.batching import collate
from rlvr.train.logprobs import completion_logprobs
from rlvr.train.shared_prompt import prompt_groups
from rlvr.types import Rollout


def grouped_batch(prompts, completions):
    """Each prompt with each completion: rows sharing a prompt, as in a GRPO group."""
    rows = [Rollout(p, c, (0.0,) * len(c), "", "stop") for p in prompts for c in completions]
    return collate(rows, torch.zeros(len(rows)), torch.zeros(len(rows), dtype=torch.long), 0)


A = grouped_batch([(5, 6, 7, 8), (9, 10, 11)], [(20, 21, 0), (22, 23, 24, 25, 0), (26,)])
B = grouped_batch([(30, 31), (32, 33, 34, 35, 36)], [(40, 41, 42, 0), (43, 0)])


def logp(model, batch, share=True):
    with torch.no_grad():
        return completion_logprobs(model, batch, entropy=False, share_prompts=share)[0] * batch.completion_mask


def test_both_batches_share_prompts():
    assert prompt_groups(A) is not None and prompt_groups(B) is not None
    assert prompt_groups(grouped_batch([(5, 6), (7, 8)], [(1, 0)])) is None  # no two rows share one


def test_shared_forward_equals_the_plain_one_within_rounding(tiny_pair, monkeypatch):
    import rlvr.train.logprobs as logprobs

    calls = []
    real = logprobs.shared_prompt_forward
    monkeypatch.setattr(logprobs, "shared_prompt_forward", lambda *a, **k: calls.append(1) or real(*a, **k))
    model = tiny_pair[0]
    for batch in (A, B):
        torch.testing.assert_close(logp(model, batch), logp(model, batch, share=False), rtol=1e-5, atol=1e-5)
    assert len(calls) == 2  # the shared path ran (a signature change would silently fall back to plain)


def test_shared_forward_is_bit_identical_across_calls_with_other_batches_between(tiny_pair):
    model = tiny_pair[0]
    first = logp(model, A)
    logp(model, B)
    logp(model, B, share=False)
    assert torch.equal(logp(model, A), first)
