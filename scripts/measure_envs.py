"""Measurements quoted in docs/environments.md: parallel slow steps, token fidelity.

Run from the repository root: PYTHONPATH=src python scripts/measure_envs.py
"""

from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path

import torch

from rlvr.engines.base import SamplingParams
from rlvr.envs import Env, EpisodeLimits, EpisodeRunner, PlainRenderer, StepResult
from rlvr.models.char_tokenizer import build_char_tokenizer
from rlvr.train.batching import collate
from rlvr.train.logprobs import batch_logprobs
from rlvr.types import Sample

TESTS = Path(__file__).resolve().parents[1] / "tests" / "envs"
sys.path.insert(0, str(TESTS))
from conftest import ScriptedEngine  # noqa: E402  (the tests' scripted engine)


class Slow(Env):
    def reset(self, sample, seed):
        return "go"

    def step(self, action):
        time.sleep(0.3)
        return StepResult("x")


def parallel_steps() -> None:
    tok = build_char_tokenizer()
    for workers in (1, 16):
        t0 = time.perf_counter()
        with EpisodeRunner(ScriptedEngine(tok, lambda t: "ok"), PlainRenderer(tok), SamplingParams(),
                           EpisodeLimits(max_turns=1), workers=workers) as runner:
            runner.run(Slow, [Sample("p", "")] * 8, list(range(8)))
        print(f"workers={workers}: 8 episodes x one 0.3 s step: {time.perf_counter() - t0:.2f} s")


def fidelity() -> None:
    spec = importlib.util.spec_from_file_location("fidelity", TESTS / "test_token_fidelity.py")
    tests = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tests)
    for chat in (False, True):
        tok, model, _, episodes = tests.play(chat)
        rows = [ep.trajectory.to_rollout("", "stop") for ep in episodes]
        batch = collate(rows, torch.zeros(len(rows)), torch.arange(len(rows)), tok.pad_token_id)
        with torch.no_grad():
            logp = batch_logprobs(model, batch)
        diff = max(float((logp[i, :len(r.completion_ids)] - torch.tensor(r.logprobs))
                         [torch.tensor(r.loss_mask, dtype=torch.bool)].abs().max()) for i, r in enumerate(rows))
        changed = sum(tok(tok.decode(s := ep.trajectory.sequence()), add_special_tokens=False)["input_ids"] != s
                      for ep in episodes)
        print(f"chat={chat}: turns {[len(ep.trajectory.turns) for ep in episodes]}, max |trainer - engine| "
              f"on policy tokens {diff:.1e}, text round trip changed {changed}/{len(episodes)} trajectories")


if __name__ == "__main__":
    torch.set_num_threads(2)
    parallel_steps()
    fidelity()
