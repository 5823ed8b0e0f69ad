"""Make the environment model that recipes/env_guess_number.toml trains: a tiny char-level
Qwen2 (context 256) that knows the format of guess-the-number episodes, not the skill.

    python scripts/make_env_model.py [--out models/tiny-env] [--steps N] [--seed S] [--heads H]

`--heads 2 --out models/tiny-env-h32` makes the same model with head size 32 (64 / 2), which
vLLM's CPU attention runs (it refuses tiny-env's 16: rlvr.engines.vllm_engine.CPU_HEAD_SIZES);
the vLLM engine's environment runs use it.

Supervised fine-tuning on episodes played by a random policy against the real environment
(rlvr.envs.guess_number, rendered by rlvr.envs.PlainRenderer: the tokens a run will see):
each guess is uniform in the game's range whatever the feedback said, so the model learns to
answer with one number in range and to go on after an observation, and nothing about using
the higher/lower feedback (what GRPO over trajectories could teach it). Only the guesses
are trained on (the observation and prompt tokens carry label -100). Deterministic from its
seed on a given machine and thread count.
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))  # teacher_sft, also when a test loads this file
from teacher_sft import fine_tune, sft_parser, write_card  # noqa: E402
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


def main() -> None:
    ap = sft_parser(__doc__, out="models/tiny-env", steps=150)
    ap.add_argument("--heads", type=int, default=4, help="attention heads; head size = 64 / heads")
    args = ap.parse_args()
    torch.set_num_threads(2)
    start, rng = time.time(), random.Random(args.seed)
    tokenizer = build_char_tokenizer()
    renderer = PlainRenderer(tokenizer)
    model = tiny_qwen2(hidden_size=64, intermediate_size=256, num_layers=2, num_heads=args.heads,
                       num_kv_heads=min(2, args.heads),
                       max_positions=256, seed=args.seed)
    loss = fine_tune(model, lambda: [episode(renderer, rng) for _ in range(args.batch)], steps=args.steps,
                     lr=args.lr, pad=tokenizer.pad_token_id, log_every=25)
    out = Path(args.out)
    model.save_pretrained(out, safe_serialization=True)
    tokenizer.save_pretrained(out)
    write_card(out, model, args, start, loss,
               heads=args.heads, data=f"random-policy guess-the-number episodes, ranges {RANGES}, up to {TURNS} turns")


if __name__ == "__main__":
    main()
