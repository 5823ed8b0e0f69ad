"""The vLLM engine's `generate_ids` (token prompts, what multi-turn episodes call).

The first tests use a fake shaped like vLLM's `LLM` (attribute names as in vLLM 0.27 to 0.32)
and check OUR side: what is sent, the context cut, the prompt-id check. The last one plays
guess-the-number episodes on a real vLLM (CPU in `make test-vllm`; marked `vllm`) and replays
them through the trainer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import shutil
from pathlib import Path

import pytest
import torch

from rlvr.engines import SamplingParams
from rlvr.engines.vllm_engine import VLLMEngine, draw_seeds, vllm_unavailable_reason
from rlvr.errors import ConfigError, RlvrError

REPO = Path(__file__).resolve().parents[2]


@dataclass
class Logprob:
    logprob: float


@dataclass
class Completion:
    index: int
    token_ids: list[int]
    logprobs: list[dict[int, Logprob]]
    finish_reason: str = "length"
    stop_reason: int | str | None = None


@dataclass
class RequestOutput:
    prompt_token_ids: list[int]
    outputs: list[Completion]


@dataclass
class TokenLLM:
    """Answers every request with tokens 5, 6 (log-probs -0.5, -0.25) and reports the prompt
    ids it was given, or those of `altered` (a vLLM that re-tokenised, say)."""

    altered: list[int] | None = None
    calls: list = field(default_factory=list)

    def generate(self, requests, params, use_tqdm):
        self.calls.append((requests, params))
        return [RequestOutput(self.altered or req["prompt_token_ids"],
                              [Completion(0, [5, 6], [{5: Logprob(-0.5)}, {6: Logprob(-0.25)}])])
                for req in requests]


def test_rows_go_to_vllm_as_sent_one_request_each(tokenizer):
    llm = TokenLLM()
    engine = VLLMEngine(llm, tokenizer, dict, seed=4)
    rows = [[3, 1, 4, 1, 5], [9, 2, 6]]
    out = engine.generate_ids(rows, SamplingParams(max_new_tokens=4))
    [(requests, params)] = llm.calls
    assert requests == [{"prompt_token_ids": row} for row in rows]
    assert [p["n"] for p in params] == [1, 1] and [p["max_tokens"] for p in params] == [4, 4]
    assert [p["seed"] for p in params] == draw_seeds(torch.Generator().manual_seed(4), 2, 1)
    assert [r.prompt_ids for r in out] == [tuple(row) for row in rows]
    assert [r.completion_ids for r in out] == [(5, 6)] * 2 and out[0].logprobs == (-0.5, -0.25)


def test_max_new_tokens_is_cut_to_the_room_left_in_the_context(tokenizer):
    llm = TokenLLM()
    engine = VLLMEngine(llm, tokenizer, dict, context=10)
    engine.generate_ids([[1] * 3, [1] * 8], SamplingParams(max_new_tokens=4, min_new_tokens=3))
    [(_, params)] = llm.calls
    assert [(p["max_tokens"], p["min_tokens"]) for p in params] == [(4, 3), (2, 2)]
    with pytest.raises(ValueError, match="row 1 of generate_ids has 10 tokens: no room left"):
        engine.generate_ids([[1], [1] * 10], SamplingParams())


def test_other_prompt_ids_from_vllm_are_an_error(tokenizer):
    engine = VLLMEngine(TokenLLM(altered=[3, 1, 41, 5]), tokenizer, dict)
    with pytest.raises(RlvrError, match="prompt 0 from other ids than were sent.*token fidelity"):
        engine.generate_ids([[3, 1, 4, 1, 5]], SamplingParams())


def head_size_32_copy(model, tok, tmp_path: Path) -> Path:
    """A random Qwen2 like `model` but with head size 32 (2 heads of 32 instead of 4 of 16), for
    vLLM's CPU attention; tokenizer and chat template as the original's."""
    from rlvr.models import tiny_qwen2

    c = model.config
    net = tiny_qwen2(hidden_size=c.hidden_size, intermediate_size=c.intermediate_size, num_layers=c.num_hidden_layers,
                     num_heads=c.hidden_size // 32, num_kv_heads=1, vocab_size=c.vocab_size,
                     max_positions=c.max_position_embeddings, seed=0)
    folder = tmp_path / "env-model-head32"
    net.save_pretrained(folder)
    tok.save_pretrained(folder)
    shutil.copy(REPO / "models" / "tiny-env" / "generation_config.json", folder)  # its EOS ids
    return folder


@pytest.mark.vllm
@pytest.mark.skipif(vllm_unavailable_reason() is not None, reason=vllm_unavailable_reason() or "")
def test_vllm_episodes_keep_the_sampled_tokens_and_their_logprobs(vllm_start, tmp_path):
    """Guess-the-number episodes on vLLM (float32, models/tiny-env), replayed through the
    trainer's log-prob code, give vLLM's log-probs on every policy token within 1e-4
    (temperature 1, top_p 1: the same quantity as HFEngine's), and the observations are
    masked with log-prob 0."""
    from rlvr.engines.loading import load_model, load_tokenizer
    from rlvr.envs import EpisodeLimits, EpisodeRunner, renderer_for
    from rlvr.envs.guess_number import GuessNumberEnv, guess_number_samples
    from rlvr.train.batching import collate
    from rlvr.train.logprobs import batch_logprobs

    folder = REPO / "models" / "tiny-env"
    tok, model = load_tokenizer(folder), load_model(folder, "float32")
    try:
        engine = vllm_start(folder, tok, model.config.max_position_embeddings)
    except ConfigError:  # models/tiny-env's head size 16 is not one vLLM's CPU attention runs:
        folder = head_size_32_copy(model, tok, tmp_path)  # random weights, same tokenizer
        model = load_model(folder, "float32")
        engine = vllm_start(folder, tok, model.config.max_position_embeddings)
    try:
        with EpisodeRunner(engine, renderer_for(tok), SamplingParams(max_new_tokens=4, temperature=1.0),
                           EpisodeLimits(max_turns=4, max_total_tokens=200)) as runner:
            episodes = runner.run(GuessNumberEnv, guess_number_samples(8, seed=0, high=20), list(range(8)))
    finally:
        engine.close()
    assert any(len(ep.trajectory.turns) >= 2 for ep in episodes)  # multi-turn, or this says nothing
    rollouts = [ep.trajectory.to_rollout("", "stop") for ep in episodes]
    batch = collate(rollouts, torch.zeros(len(rollouts)), torch.arange(len(rollouts)), tok.pad_token_id)
    with torch.no_grad():
        logp = batch_logprobs(model, batch)
    for i, r in enumerate(rollouts):
        mask = torch.tensor(r.loss_mask, dtype=torch.bool)
        sampled, trainer = torch.tensor(r.logprobs), logp[i, :len(r.completion_ids)]
        torch.testing.assert_close(trainer[mask], sampled[mask], atol=1e-4, rtol=0)
        assert torch.all(sampled[~mask] == 0)
