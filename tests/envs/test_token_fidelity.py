"""Token in, token out, on a real engine: a tiny random Qwen2 and a BPE tokenizer trained here.

(a) a stored trajectory, replayed through the trainer's log-prob code, gives the engine's
    sampling log-probs on every policy token (within 1e-4);
(b) decoding the trajectory and re-encoding it gives other ids: re-tokenising would have
    trained on tokens the policy never sampled;
(c) the observation tokens are exactly the renderer's, masked out, log-prob 0.
Both renderers: the plain format and a chat template with a `tool` role.
"""

from __future__ import annotations

import dataclasses
import json

import pytest
import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import PreTrainedTokenizerFast

from rlvr.engines.base import SamplingParams
from rlvr.engines.hf import HFEngine
from rlvr.envs import ChatRenderer, EpisodeLimits, EpisodeRunner, PlainRenderer
from rlvr.envs.guess_number import GuessNumberEnv, guess_number_samples
from rlvr.models.tiny_qwen2 import tiny_qwen2
from rlvr.train.batching import collate
from rlvr.train.logprobs import batch_logprobs
from rlvr.types import Rollout

CORPUS = ["I am thinking of a number from 1 to 100. Guess it: answer with one number.",
          "50 is too low: guess higher.", "25 is too high: guess lower.", "Answer with one whole number.",
          "<obs>37 is too low</obs>", "the number is 42, my guess is 64"] * 20
# Qwen-style ChatML; `tool` messages are the observations.
CHAT_TEMPLATE = ("{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
                 "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


def bpe_tokenizer(chat: bool) -> PreTrainedTokenizerFast:
    """A byte-level BPE (~100 merges) trained on CORPUS, nothing downloaded."""
    core = Tokenizer(models.BPE())
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=360, special_tokens=["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    core.train_from_iterator(CORPUS, trainer)
    tok = PreTrainedTokenizerFast(tokenizer_object=core, eos_token="<|im_end|>" if chat else "<|endoftext|>",
                                  pad_token="<|endoftext|>", padding_side="left")
    if chat:
        tok.chat_template = CHAT_TEMPLATE
    return tok


def play(chat: bool, seed: int = 0):
    tok = bpe_tokenizer(chat)
    torch.manual_seed(0)
    model = tiny_qwen2(hidden_size=32, intermediate_size=64, num_layers=2, num_heads=4, num_kv_heads=2,
                       vocab_size=len(tok), max_positions=512, seed=seed)
    engine = HFEngine(model, tok, seed=seed)
    renderer = ChatRenderer(tok) if chat else PlainRenderer(tok)
    samples = guess_number_samples(4, seed=seed)
    with EpisodeRunner(engine, renderer, SamplingParams(max_new_tokens=12, temperature=1.0),
                       EpisodeLimits(max_turns=3, max_total_tokens=400)) as runner:
        episodes = runner.run(GuessNumberEnv, samples, [0, 1, 2, 3])
    return tok, model, renderer, episodes


@pytest.fixture(scope="module", params=[False, True], ids=["plain", "chat"])
def played(request):
    torch.set_num_threads(2)
    return play(request.param)


def stored(rollouts: list[Rollout]) -> list[Rollout]:
    """Through JSON and back, as samples.jsonl would hold them."""
    text = json.dumps([dataclasses.asdict(r) for r in rollouts])
    return [Rollout(**{k: tuple(v) if isinstance(v, list) else v for k, v in row.items()}) for row in json.loads(text)]


def test_trainer_logprobs_equal_the_engines_on_policy_tokens(played):
    tok, model, _, episodes = played
    assert all(len(ep.trajectory.turns) >= 2 for ep in episodes)  # multi-turn, or the test says nothing
    rollouts = stored([ep.trajectory.to_rollout("", "stop") for ep in episodes])
    batch = collate(rollouts, torch.zeros(len(rollouts)), torch.arange(len(rollouts)), tok.pad_token_id)
    with torch.no_grad():
        logp = batch_logprobs(model, batch)  # (B, T)
    for i, r in enumerate(rollouts):
        mask = torch.tensor(r.loss_mask, dtype=torch.bool)
        engine = torch.tensor(r.logprobs)
        trainer = logp[i, :len(r.completion_ids)]
        assert mask.sum() > 0 and (~mask).sum() > 0
        assert torch.allclose(trainer[mask], engine[mask], atol=1e-4), (trainer[mask] - engine[mask]).abs().max()
        assert torch.all(engine[~mask] == 0)


def test_a_text_round_trip_would_change_the_tokens(played):
    tok, _, _, episodes = played
    changed = 0
    for ep in episodes:
        ids = ep.trajectory.sequence()
        changed += tok(tok.decode(ids), add_special_tokens=False)["input_ids"] != ids
    assert changed >= 1
    # And a deliberate case: the policy spelled "low" letter by letter; the text re-encodes merged.
    spelled = [tok.convert_tokens_to_ids(c) for c in "low"]
    assert tok.decode(spelled) == "low"
    assert tok("low", add_special_tokens=False)["input_ids"] != spelled


def test_observation_tokens_are_the_renderers_and_masked(played):
    tok, _, renderer, episodes = played
    for ep in episodes:
        traj, at, rebuilt = ep.trajectory, 0, []
        for turn in traj.turns:
            policy = traj.ids[at:at + turn.n_policy_tokens]
            assert traj.loss_mask[at:at + len(policy)] == [1] * len(policy)
            at += len(policy)
            rebuilt += policy
            if turn.n_observation_tokens:
                obs = renderer.observation_ids(turn.observation, policy[-1])
                assert len(obs) == turn.n_observation_tokens
                assert traj.ids[at:at + len(obs)] == obs
                assert traj.loss_mask[at:at + len(obs)] == [0] * len(obs)
                at += len(obs)
                rebuilt += obs
        assert rebuilt == traj.ids  # nothing else was spliced in
        assert any(t.n_observation_tokens for t in traj.turns)


def test_chat_delta_drops_the_sampled_eos():
    tok = bpe_tokenizer(chat=True)
    r = ChatRenderer(tok)
    assert r.observation_text("5 is too low", tok.eos_token_id) == "\n<|im_start|>tool\n5 is too low<|im_end|>\n" \
                                                                   "<|im_start|>assistant\n"
    assert r.observation_text("5 is too low", 7).startswith("<|im_end|>\n<|im_start|>tool")  # a cut turn: closed here
    assert tok.decode(r.prompt_ids("hi")) == "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
