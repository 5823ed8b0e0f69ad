"""Make the model that recipes/env_textarena_guess_number.toml trains: a tiny char-level Qwen2
(context 1024) that plays textarena's GuessTheNumber-v0 (1..20, 5 guesses) through the real
adapter, legally but mostly badly.

    python scripts/make_arena_model.py [--out models/tiny-arena] [--steps N] [--seed S]

Supervised fine-tuning on episodes of a two-style teacher played against textarena itself
(rlvr.envs.textarena_env.TextArenaEnv with the recipe's game and options, rendered by
rlvr.envs.PlainRenderer: the game's own 507-character prompt and messages, the tokens a run
sees). Each episode the teacher is, from its first guess to its last, one of

    bisector   guesses the middle of the numbers the hints still allow: always wins in 5
    scanner    guesses the smallest number the hints still allow (1, 2, 3, ...): wins only
               when the secret is at most 5, else loses on textarena's partial credit

with probability BISECT and 1 - BISECT. Why one style an episode and not a mix of moves: the
game's prompt is the same for every seed, so the first guess ("10" or "1") is one choice made
the same way in every game, and the rest of the episode follows from the hints along one of
two small decision trees; a per-move mix would ask the model for the midpoint of any interval
the mixed histories reach. With BISECT < 1/2 the greedy first guess is the scanner's (greedy
play wins the games whose secret is at most 6: 0.30 of the held-out ones) while sampling opens
like the bisector BISECT of the time. The defaults learn the bisector's tree imperfectly: of
the sampled games that opened with "10", 52% were won (the teacher wins all); GRPO mostly
learns to open with "10" (docs/environments.md, "A model that plays a textarena game"). The actions
are bare numbers: the adapter's bracket_actions sends "10" as "[10]". Only the guesses are
trained on (prompt and observation tokens carry label -100). Deterministic from its seed on a
given machine and thread count.
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))  # teacher_sft, also when a test loads this file
from teacher_sft import Row, fine_tune, sft_parser, write_card  # noqa: E402
from rlvr.envs import PlainRenderer  # noqa: E402
from rlvr.envs.textarena_env import TextArenaEnv  # noqa: E402
from rlvr.models import build_char_tokenizer, tiny_qwen2  # noqa: E402
from rlvr.tasks.game_seeds import game_seed_splits  # noqa: E402
from rlvr.types import Sample  # noqa: E402

# What recipes/env_textarena_guess_number.toml sets ([task], env.game, env.options); a test
# checks that they agree.
GAME, OPTIONS = "GuessTheNumber-v0", {"max_turns": 5}
LOW, HIGH = 1, 20  # GuessTheNumber-v0's registered range
TASK = {"seed": 0, "train_size": 1000, "test_size": 100}
BISECT = 0.3
CONTEXT = 1024


def teacher_guess(style: str, low: int, high: int) -> int:
    """The next guess when the hints allow low..high."""
    return (low + high) // 2 if style == "bisect" else low


def episode(renderer: PlainRenderer, sample: Sample, style: str) -> Row:
    """(ids, labels) of one teacher game: labels -100 except on the guesses and their EOS."""
    env, eos = TextArenaEnv(GAME, OPTIONS), renderer.tokenizer.eos_token_id
    ids = renderer.prompt_ids(env.reset(sample, 0))
    labels = [-100] * len(ids)
    low, high = LOW, HIGH
    while True:
        guess = teacher_guess(style, low, high)
        turn = renderer.encode(str(guess)) + [eos]
        ids, labels = ids + turn, labels + turn
        result = env.step(str(guess))
        if result.done:
            return ids, labels
        if "higher" in result.observation:
            low = guess + 1
        elif "lower" in result.observation:
            high = guess - 1
        else:
            raise RuntimeError(f"the teacher made a move the game did not take: {result.observation!r}")
        obs = renderer.observation_ids(result.observation, eos)
        ids, labels = ids + obs, labels + [-100] * len(obs)


def draw_rows(renderer: PlainRenderer, train: list[Sample], rng: random.Random, size: int) -> list[Row]:
    rows = []
    for _ in range(size):
        sample = rng.choice(train)
        rows.append(episode(renderer, sample, "bisect" if rng.random() < BISECT else "scan"))
    return rows


def main() -> None:
    args = sft_parser(__doc__, out="models/tiny-arena", steps=300, batch=16).parse_args()
    torch.set_num_threads(2)
    start, rng = time.time(), random.Random(args.seed)
    train, _ = game_seed_splits(**TASK, name="textarena")  # as the task registry names them
    tokenizer = build_char_tokenizer()
    renderer = PlainRenderer(tokenizer)
    model = tiny_qwen2(hidden_size=64, intermediate_size=256, num_layers=2, num_heads=4, num_kv_heads=2,
                       max_positions=CONTEXT, seed=args.seed)
    loss = fine_tune(model, lambda: draw_rows(renderer, train, rng, args.batch), steps=args.steps, lr=args.lr,
                     pad=tokenizer.pad_token_id, decay_tail=0.3, log_every=25)
    out = Path(args.out)
    model.save_pretrained(out, safe_serialization=True)
    tokenizer.save_pretrained(out)
    write_card(out, model, args, start, loss, game=GAME, options=OPTIONS, context=CONTEXT,
               data=f"textarena {GAME} {OPTIONS} games on the train seeds of {TASK}, played by a teacher that "
                    f"bisects the hinted range (probability {BISECT}) or scans it from its low end, one style a game")


if __name__ == "__main__":
    main()
