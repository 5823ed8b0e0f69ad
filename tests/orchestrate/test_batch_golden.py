"""build_batch on a real small batch (the tiny model, 2 groups of 3) equals, bit for bit, the
tensors the pre-chain build_batch produced, for every shipped recipe and a few variants that
exercise the steps no recipe turns on (mismatch, KL-in-reward estimators, covariance).

The fixture `data/batch_golden.pt` was recorded from the old build_batch (commit 99ab323, before
the chain) on CPU, float32, 2 threads; the model forwards make it exact only on such a setup. It predates
the shared-prompt forward (rlvr.train.shared_prompt), which rounds the log-probs differently
(other GEMM and attention shapes; measured 2026-12-01: at most 2.9e-6 absolute, 1.1e-6
relative, in old_logp / ref_logp and what follows from them), so the bit-exact test runs the
plain forward and a second test holds the shared forward to the fixture within that rounding.
Re-record (only when a change is meant to move the numbers):

    PYTHONPATH=src python tests/orchestrate/test_batch_golden.py --record
"""

from __future__ import annotations

import copy
import dataclasses
import sys
from pathlib import Path

import pytest
import torch

from rlvr.config import load_config
from rlvr.engines.loading import load_model, load_tokenizer, pad_token_id
from rlvr.orchestrate.batch_builder import BatchModels, BatchSpec, build_batch
from rlvr.train import logprobs
from rlvr.train.batching import collate
from rlvr.train.logprobs import batch_logprobs
from rlvr.types import Rollout, Sample, Scored

REPO = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).parent / "data" / "batch_golden.pt"
# Environment recipes (env_*) are left out: their [algo] is a single-turn recipe's, the recorded
# fixture predates them, and their batches (episodes with a loss mask) are checked against the
# rollouts' masks in tests/orchestrate/test_env_run.py.
RECIPES = sorted(p.stem for p in (REPO / "recipes").glob("*.toml") if not p.stem.startswith("env_"))
VARIANTS = {  # name: (recipe, overrides)
    "reward_k3_clamp": ("grpo", ["algo.kl_placement=reward", "algo.kl_clamp=0.05"]),
    "reward_k2_group": ("grpo", ["algo.kl=k2", "algo.kl_placement=reward", "algo.kl_coef=0.3"]),
    "reinforce_pp_baseline": ("reinforce_pp", ["algo.baseline=group_mean", "algo.gamma=0.9", "algo.kl=k3"]),
    "token_tis": ("grpo", ["algo.mismatch=token_tis", "algo.mismatch_cap=1.5"]),
    "sequence_mis": ("grpo", ["algo.mismatch=sequence_mis", "algo.mismatch_cap=3.0"]),
    "token_mis_ppo": ("ppo", ["algo.mismatch=token_mis", "algo.gamma=0.9", "algo.lam=0.8", "algo.lam_critic=1.0"]),
    "kl_cov": ("dapo", ["algo.entropy_control=kl_cov", "algo.cov_ratio=0.2", "sampling.mask_truncated=true"]),
    "clip_cov": ("grpo", ["algo.entropy_control=clip_cov", "algo.cov_ratio=0.3", "algo.cov_low=-1.0",
                          "algo.cov_high=1.0"]),
    "rloo_positive_lm": ("rloo", ["algo.positive_lm_coef=0.1", "sampling.mask_truncated=true"]),
    "batch_std_raw": ("grpo", ["algo.scale=batch_std_raw", "algo.kl=none", "algo.kl_coef=0", "sampling.temperature=0.7"]),
}
CASES = sorted(RECIPES) + sorted(VARIANTS)
# (prompt ids, completion length, finish reason, verifier reward) per member of two groups.
SHAPES = [[((5, 6, 7, 8), 3, "stop", 1.0), ((5, 6, 7, 8), 8, "length", 0.0), ((5, 6, 7, 8), 6, "stop", 1.0)],
          [((9, 10, 11), 7, "stop", 0.0), ((9, 10, 11), 2, "stop", 0.5), ((9, 10, 11), 8, "length", 1.0)]]


def golden_groups(model, pad_id: int) -> list[list[Scored]]:
    """Fixed token ids; the engine log-probs are the model's own plus uniform noise in
    [-0.5, 0.5], so the mismatch weights fall on both sides of their bounds."""
    gen = torch.Generator().manual_seed(13)
    rows = [(p, tuple(int(x) for x in torch.randint(1, 128, (n - (f == "stop"),), generator=gen))
             + ((0,) if f == "stop" else ()), f, r) for g in SHAPES for (p, n, f, r) in g]
    plain = [Rollout(p, c, (0.0,) * len(c), "", f) for p, c, f, _ in rows]
    batch = collate(plain, torch.zeros(len(plain)), torch.zeros(len(plain), dtype=torch.long), pad_id)
    with torch.no_grad():
        logp = batch_logprobs(model, batch)
    noise = torch.rand(logp.shape, generator=gen) - 0.5
    groups, k = [], 0
    for g in SHAPES:
        members = []
        for _ in g:
            p, c, f, r = rows[k]
            lp = tuple(float(x) for x in (logp[k, :len(c)] + noise[k, :len(c)]))
            members.append(Scored(Sample("q", "a"), Rollout(p, c, lp, "", f), r, "fixed"))
            k += 1
        groups.append(members)
    return groups


def perturbed_reference(model):
    """The reference: the tiny model with small fixed noise on its (tied) embeddings."""
    ref = copy.deepcopy(model).eval()
    gen = torch.Generator().manual_seed(7)
    with torch.no_grad():
        emb = ref.get_input_embeddings().weight
        emb.add_(0.05 * torch.randn(emb.shape, generator=gen))
    return ref


class FixedCritic:
    """values(batch): a fixed function of the completion tokens, (B, T)."""

    def values(self, batch):
        return (batch.input_ids[:, batch.prompt_len:].float() / 128.0 - 0.3) * batch.completion_mask


def case_config(name: str):
    recipe, overrides = VARIANTS.get(name, (name, []))
    return load_config(REPO / "recipes" / f"{recipe}.toml", overrides)


def run_case(name: str, model, ref, tokenizer) -> dict[str, torch.Tensor | float]:
    """build_batch's outputs for one case, flattened to names → tensors / floats."""
    config = case_config(name)
    models = BatchModels(model, ref if config.algo.kl != "none" else None,
                         FixedCritic() if config.algo.advantage == "gae" else None, pad_token_id(tokenizer))
    torch.manual_seed(0)  # clip_cov draws from the global RNG
    built = build_batch(golden_groups(model, models.pad_id), BatchSpec.from_config(config), models)
    batch = built.batch
    out: dict = {f"batch.{f.name}": v for f in dataclasses.fields(batch) if (v := getattr(batch, f.name)) is not None}
    out.update({f"metrics.{k}": v for k, v in built.metrics.items()})
    if built.critic_targets is not None:
        out["critic.values"], out["critic.targets"] = built.critic_targets
    return out


@pytest.fixture(scope="module")
def golden():
    return torch.load(GOLDEN)


@pytest.fixture(scope="module")
def reference(tiny_pair):
    return perturbed_reference(tiny_pair[0])


@pytest.mark.parametrize("name", CASES)
def test_build_batch_matches_the_recorded_tensors(name, golden, tiny_pair, reference, monkeypatch):
    monkeypatch.setattr(logprobs, "prompt_groups", lambda batch: None)  # the plain forward, as recorded
    got = run_case(name, tiny_pair[0], reference, tiny_pair[1])
    want = golden[name]
    assert sorted(got) == sorted(want), name
    for key, value in want.items():  # within rounding: another CPU's kernels round the forward differently
        if isinstance(value, torch.Tensor):
            assert got[key].dtype == value.dtype, (name, key)
            torch.testing.assert_close(got[key], value, rtol=1e-6, atol=1e-5, msg=f"{name} {key}")
        else:
            assert got[key] == pytest.approx(value, rel=1e-6, abs=1e-5), (name, key)


@pytest.mark.parametrize("name", ["grpo", "ppo", "reinforce_pp", "token_tis", "kl_cov"])
def test_shared_prompt_forward_is_within_rounding_of_the_recorded_tensors(name, golden, tiny_pair, reference):
    got = run_case(name, tiny_pair[0], reference, tiny_pair[1])
    want = golden[name]
    assert sorted(got) == sorted(want), name
    for key, value in want.items():
        if isinstance(value, torch.Tensor):
            torch.testing.assert_close(got[key], value, rtol=1e-5, atol=1e-5, msg=f"{name} {key}")
        else:
            assert got[key] == pytest.approx(value, rel=1e-5, abs=1e-5), (name, key)


def record() -> None:
    torch.set_num_threads(2)
    tiny = REPO / "models" / "tiny-arith"
    model, tokenizer = load_model(tiny), load_tokenizer(tiny)
    ref = perturbed_reference(model)
    GOLDEN.parent.mkdir(exist_ok=True)
    torch.save({name: run_case(name, model, ref, tokenizer) for name in CASES}, GOLDEN)
    print(f"recorded {len(CASES)} cases to {GOLDEN} ({GOLDEN.stat().st_size} bytes)")


if __name__ == "__main__" and "--record" in sys.argv:
    record()
