"""Sampling-mask replay: the engine records each token's kept top-k / top-p set size
(rlvr.engines.hf.draw), the trainer renormalises its log-probs over its own top k_t
(rlvr.train.logprobs.kept_log_mass), so pi / pi_old compares the truncated distributions."""

from __future__ import annotations

import dataclasses
import math

import pytest
import torch

from rlvr.engines import HFEngine, SamplingParams
from rlvr.engines.hf import draw
from rlvr.train.batching import collate
from rlvr.train.logprobs import _head_stats, batch_logprobs, completion_logprobs, kept_log_mass

P5 = torch.tensor([0.4, 0.3, 0.15, 0.1, 0.05])  # a 5-token vocabulary, already sorted


def test_renormalisation_over_the_kept_set_by_hand():
    logp_all = P5.log()[None].expand(4, 5)
    targets = torch.tensor([1, 4, 0, 2])
    support = torch.tensor([3, 3, 1, 0])
    got = logp_all.gather(-1, targets[:, None]).squeeze(1) - kept_log_mass(logp_all, targets, support)
    want = [math.log(0.3 / 0.85),  # S = {0, 1, 2}: mass 0.4 + 0.3 + 0.15
            math.log(0.05 / 0.75),  # target ranked 5th, k = 3: the 2 first and it, 0.4 + 0.3 + 0.05
            0.0,  # k = 1: the set is the target alone
            math.log(0.15)]  # k = 0: the full vocabulary, untouched
    torch.testing.assert_close(got, torch.tensor(want), atol=1e-6, rtol=0)


def test_ties_at_the_edge_do_not_change_the_mass():
    # p = [0.3, 0.3, 0.3, 0.1], k = 2: whichever two of the tied tokens the engine kept, the mass
    # is 0.6; the target (token 2, tied) is in the set: log(0.3 / 0.6).
    logp_all = torch.tensor([[0.3, 0.3, 0.3, 0.1]]).log()
    got = logp_all[0, 2] - kept_log_mass(logp_all, torch.tensor([2]), torch.tensor([2]))
    assert abs(float(got) - math.log(0.5)) < 1e-6


def test_the_gradient_stays_inside_the_kept_set():
    logits = torch.randn(1, 5, requires_grad=True)
    logp_all = torch.log_softmax(logits, dim=-1)
    order = logits.detach().argsort(descending=True)[0]
    target = order[:1]
    (logp_all[0, target] - kept_log_mass(logp_all, target, torch.tensor([2]))).sum().backward()
    # d/dz of z_t - logsumexp_{S} z: zero off S, 1 - q_t at the target, -q_v on S's other token
    outside = order[2:]
    assert float(logits.grad[0, outside].abs().max()) < 1e-7  # zero up to log_softmax rounding
    assert abs(float(logits.grad.sum())) < 1e-6 and float(logits.grad[0, target]) > 0


@pytest.mark.parametrize("top_p, top_k, kept", [(0.65, 0, 2), (1.0, 3, 3), (0.55, 0, 2), (0.55, 2, 1)])
def test_the_engine_keeps_top_k_then_top_p_and_records_the_size(top_p, top_k, kept):
    # top_k = 2, top_p = 0.55: top-p runs on the top-2 mass 0.7, target 0.385, so 0.4 alone
    # suffices (vLLM's order); top_p = 0.55 alone keeps 0.4 + 0.3. top_p = 0.65: 0.4 + 0.3.
    logits = P5.log()[None].expand(64, 5)
    d = draw(logits, SamplingParams(top_p=top_p, top_k=top_k), torch.Generator().manual_seed(0))
    assert torch.all(d.kept == kept) and int(d.token.max()) < kept
    mass = float(P5[:kept].sum())
    torch.testing.assert_close(d.kept_logp, P5.log()[d.token] - math.log(mass), atol=1e-6, rtol=0)
    torch.testing.assert_close(d.logp, P5.log()[d.token], atol=1e-6, rtol=0)


def replayed_rollouts(tiny_model, tokenizer, **params):
    engine = HFEngine(tiny_model, tokenizer, seed=3)
    groups = engine.generate(["12+34=", "7+80="], 4, SamplingParams(max_new_tokens=6, replay_support=True, **params))
    rollouts = [r for g in groups for r in g]
    return rollouts, collate(rollouts, torch.zeros(len(rollouts)), torch.arange(len(rollouts)) // 4, engine.pad_id)


# top_k at T = 0.8: 1.2e-6 measured, float32 rounding of the decode path's logits against
# teacher forcing (the division by T adds one rounding); top_p: 1.07e-6 measured since the
# trainer runs each prompt once (rlvr.train.shared_prompt: other GEMM and attention shapes)
# and the engine prefills it once, top_k then 2.03e-6
@pytest.mark.parametrize("params, atol", [(dict(top_p=0.7), 2e-6), (dict(top_k=4, temperature=0.8), 3e-6)],
                         ids=["top_p", "top_k"])
def test_in_process_replay_matches_the_engines_sampling_logprobs(tiny_model, tokenizer, params, atol):
    rollouts, batch = replayed_rollouts(tiny_model, tokenizer, **params)
    assert all(len(r.support) == len(r.completion_ids) for r in rollouts)
    assert int(batch.support.max()) > 1  # some tokens had a real choice
    mask = batch.completion_mask.bool()
    t = params.get("temperature", 1.0)
    with torch.no_grad():
        replayed = batch_logprobs(tiny_model, batch, t)
        full = batch_logprobs(tiny_model, dataclasses.replace(batch, support=None), t)
    assert float((replayed - batch.old_logp)[mask].abs().max()) < atol
    assert float((full - batch.old_logp)[mask].abs().max()) > 1e-2  # the untruncated ones do not


def test_chunked_and_plain_replay_agree(tiny_model, tokenizer):
    """As tests/train/test_logit_chunks.py holds the plain head: bit-identical values with
    chunks of >= 7 rows (the plain path's matmul kernel), gradients to 1e-6 of their scale (the
    chunks sum in another order)."""
    _, batch = replayed_rollouts(tiny_model, tokenizer, top_p=0.7)
    results = []
    for chunk in (0, 16):
        tiny_model.zero_grad()
        logp, entropy = completion_logprobs(tiny_model, batch, 1.0, chunk=chunk, entropy_grad=True)
        (logp * batch.completion_mask).sum().backward()
        results.append((logp.detach(), entropy.detach(), [p.grad.clone() for p in tiny_model.parameters()]))
    (lp0, h0, g0), (lp1, h1, g1) = results
    assert torch.equal(lp0, lp1) and torch.equal(h0, h1)
    g0, g1 = torch.cat([g.flatten() for g in g0]), torch.cat([g.flatten() for g in g1])
    torch.testing.assert_close(g1, g0, rtol=1e-6, atol=1e-6 * float(g0.abs().max()))


def test_without_support_the_head_is_unchanged():
    logits = torch.randn(3, 4, 7)
    targets = torch.randint(0, 7, (3, 4))
    plain, _ = _head_stats(None, logits, targets, 1.0, None)
    zeros, _ = _head_stats(None, logits, targets, 1.0, None, torch.zeros(3, 4, dtype=torch.long))
    assert torch.equal(plain, zeros)


def test_collate_refuses_a_support_of_the_wrong_length(tiny_model, tokenizer):
    rollouts, _ = replayed_rollouts(tiny_model, tokenizer, top_p=0.7)
    bad = dataclasses.replace(rollouts[0], support=rollouts[0].support + (1,))
    with pytest.raises(ValueError, match="kept-set sizes"):
        collate([bad, *rollouts[1:]], torch.zeros(len(rollouts)), torch.zeros(len(rollouts), dtype=torch.long), 0)


def test_replay_with_min_new_tokens_is_refused():
    with pytest.raises(ValueError, match="min_new_tokens > 0 is not built"):
        SamplingParams(top_p=0.9, min_new_tokens=2, replay_support=True)
