"""Make the environment model that recipes/env_guess_number.toml trains: a tiny char-level
Qwen2 (context 256) that knows the format of guess-the-number episodes, not the skill.

    python scripts/make_env_model.py [--out models/tiny-env] [--steps N] [--seed S]

Supervised fine-tuning on episodes played by a random policy against the real environment
(rlvr.envs.guess_number, rendered by rlvr.envs.PlainRenderer: the tokens a run will see):
each guess is uniform in the game's range whatever the feedback said, so the model learns to
answer with one number in range and to go on after an observation, and nothing about using
the higher/lower feedback (what GRPO over trajectories could teach it). Only the guesses
are trained on (the observation and prompt tokens carry label -100). Deterministic from its
seed on a given machine and thread count.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

import torch

from rlvr.envs import PlainRenderer
from rlvr.envs.guess_number import GuessNumberEnv
from rlvr.models import build_char_tokenizer, tiny_qwen2
from rlvr.tasks.guess_number import guess_number_prompt
from rlvr.types import Sample

RANGES = [(1, 10), (1, 20), (1, 50), (1, 100)]
TURNS = 4


def episode(renderer: PlainRenderer, rng: random.Random) -> tuple[list[int], list[int]]:
    """(ids, labels) of one random-policy episode: labels -100 except on the guesses and EOS."""
    low, high = rng.choice(RANGES)
    env = GuessNumberEnv(low, high)
    ids = renderer.prompt_ids(env.reset(Sample(guess_number_prompt(low, high), str(rng.randint(low, high))), 0))
    labels = [-100] * len(ids)
    for _ in range(TURNS):
        guess = renderer.encode(str(rng.randint(low, high))) + [renderer.tokenizer.eos_token_id]
        ids, labels = ids + guess, labels + guess
        result = env.step(renderer.tokenizer.decode(guess[:-1]))
        if result.done:
            break
        obs = renderer.observation_ids(result.observation, guess[-1])
        ids, labels = ids + obs, labels + [-100] * len(obs)
    return ids, labels


def batch(renderer: PlainRenderer, rng: random.Random, size: int, pad: int) -> tuple[torch.Tensor, torch.Tensor]:
    rows = [episode(renderer, rng) for _ in range(size)]
    width = max(len(r) for r, _ in rows)
    ids, lab = torch.full((size, width), pad), torch.full((size, width), -100)
    for i, (r, l) in enumerate(rows):
        ids[i, :len(r)], lab[i, :len(l)] = torch.tensor(r), torch.tensor(l)
    return ids, lab


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="models/tiny-env")
    ap.add_argument("--steps", type=int, default=150)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    torch.set_num_threads(2)
    start, rng = time.time(), random.Random(args.seed)
    tokenizer = build_char_tokenizer()
    renderer = PlainRenderer(tokenizer)
    model = tiny_qwen2(hidden_size=64, intermediate_size=256, num_layers=2, num_heads=4, num_kv_heads=2,
                       max_positions=256, seed=args.seed)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr)
    for step in range(args.steps):
        ids, labels = batch(renderer, rng, args.batch, tokenizer.pad_token_id)
        loss = model(input_ids=ids, labels=labels).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 25 == 0 or step == args.steps - 1:
            print(f"step {step:4d}  loss {loss.item():.4f}")
    out = Path(args.out)
    model.save_pretrained(out, safe_serialization=True)
    tokenizer.save_pretrained(out)
    card = {"sft_steps": args.steps, "batch": args.batch, "lr": args.lr, "seed": args.seed,
            "data": f"random-policy guess-the-number episodes, ranges {RANGES}, up to {TURNS} turns",
            "final_loss": round(loss.item(), 4), "seconds": round(time.time() - start, 1),
            "parameters": sum(p.numel() for p in model.parameters())}
    (out / "rlvr_model_card.json").write_text(json.dumps(card, indent=2) + "\n")
    print(json.dumps(card))


if __name__ == "__main__":
    main()
