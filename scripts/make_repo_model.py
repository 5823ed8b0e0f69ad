"""Make the model that recipes/env_repo_located.toml trains: a tiny char-level Qwen2 (context
1024) that knows the located tier's tool protocol (rlvr.envs.repo.located) but fixes poorly.

    python scripts/make_repo_model.py [--out models/tiny-repo] [--steps N] [--seed S]

Episodes of a sloppy teacher on the located tier's training tasks (9 modules; the 3 held-out
modules are never seen). The first observation is rendered as a run renders it
(PlainRenderer); the teacher's one turn is a `fix` call, auto-submitted (max_turns = 1):

    right    fix(OLD, NEW) with the reference patch's token swap
    mirror   the same token turned the wrong way: a comparison mirrored (<= -> >=), an
             operator made `*` or `/`, a constant moved the other way (n+1 where n-1 fixes it)
    other    another token of the line made something else

with probabilities TEACHER = (right, mirror, other). Mirror is the likeliest move, so the
greedy model is mostly wrong, while sampling finds the right swap about a third of the time:
the room RL has. Which swap undoes a mutation depends on the token (a `>=` comes from `>`, a
`-` from `+`), not on the module, so it carries over to held-out modules. Half the
episodes rename the file and renumber the line in the observation, so that the call does not
hang on the 9 training file names.
Only the policy's turn (and its EOS) is trained on. Deterministic from its seed on a given
machine and thread count. No sandbox is needed: the teacher never runs the tests.
"""

from __future__ import annotations

import json
import random
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))  # teacher_sft, also when a test loads this file
from teacher_sft import fine_tune, sft_parser, write_card  # noqa: E402
from rlvr.engines.loading import load_tokenizer
from rlvr.envs import PlainRenderer
from rlvr.envs.repo.load import load_repo_tasks
from rlvr.envs.repo.located import INSTRUCTIONS, _TOKEN, Location, locate, token_fix

TEACHER = (0.3, 0.5, 0.2)  # (right, mirror, other)
CONTEXT = 1024  # positions (RoPE: no weights); episodes use <= 250, but a run checks the problem statement too
TRAIN = Path(__file__).resolve().parents[1] / "src/rlvr/envs/repo/data/located_train.jsonl"
_MIRROR = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": ">=", "!=": "<", "+": "*", "-": "*", "*": "/",
           "//": "/", "%": "/", "True": "None", "False": "None"}


def call(old: str, new: str) -> str:
    """The fix call as the model writes it (compact JSON: fewer characters to generate)."""
    body = {"name": "fix", "arguments": {"old": old, "new": new}}
    return f"<tool_call>{json.dumps(body, separators=(',', ':'))}</tool_call>"


def mirror(old: str, new: str) -> str:
    """The wrong way to turn `old` (see the module docstring)."""
    if old.isdigit() and new.isdigit():
        return str(max(0, 2 * int(old) - int(new)))
    return _MIRROR.get(old, new + new)


def teacher_swap(where: Location, rng: random.Random) -> tuple[str, str]:
    old, new = token_fix(where)
    u = rng.random()
    if u < TEACHER[0]:
        return old, new
    others = [t for t in set(_TOKEN.findall(where.text)) if t != old and (t.isdigit() or t in _MIRROR)]
    if u < TEACHER[0] + TEACHER[1] or not others:
        return old, mirror(old, new)
    other = rng.choice(sorted(others))
    return other, mirror(other, str(int(other) + 1) if other.isdigit() else other)


def episode(renderer: PlainRenderer, where: Location, rng: random.Random) -> tuple[list[int], list[int]]:
    """(ids, labels) of one teacher episode: labels -100 except on the policy's turn and EOS."""
    path, line = where.path, where.line
    if rng.random() < 0.5:  # renamed and renumbered: copy, don't memorize
        path = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz_") for _ in range(rng.randint(3, 14))) + ".py"
        line = rng.randint(1, 120)
    old, new = teacher_swap(where, rng)
    prompt = renderer.prompt_ids(f"{INSTRUCTIONS}{path} line {line}: {where.text.strip()}\n")
    turn = renderer.encode(call(old, new)) + [renderer.tokenizer.eos_token_id]
    return prompt + turn, [-100] * len(prompt) + turn


def main() -> None:
    from rlvr.models import build_char_tokenizer, tiny_qwen2

    args = sft_parser(__doc__, out="models/tiny-repo", steps=220, batch=24, lr=4e-3).parse_args()
    torch.set_num_threads(2)
    start, rng = time.time(), random.Random(args.seed)
    places = [locate(t) for t in load_repo_tasks(TRAIN, None)]
    out = Path(args.out)
    model = tiny_qwen2(hidden_size=64, intermediate_size=256, num_layers=3, num_heads=4, num_kv_heads=2,
                       max_positions=CONTEXT, seed=args.seed)
    model.config.save_pretrained(out)
    build_char_tokenizer().save_pretrained(out)
    renderer = PlainRenderer(load_tokenizer(out))
    loss = fine_tune(model, lambda: [episode(renderer, rng.choice(places), rng) for _ in range(args.batch)],
                     steps=args.steps, lr=args.lr, pad=renderer.tokenizer.pad_token_id, decay_tail=0.3)
    model.save_pretrained(out, safe_serialization=True)
    write_card(out, model, args, start, loss, data=f"sloppy-teacher fix calls on {TRAIN.name} (9 modules); "
               f"(right, mirror, other) = {TEACHER}; half the episodes renamed and renumbered",
               instructions=INSTRUCTIONS, context=CONTEXT)


if __name__ == "__main__":
    main()
