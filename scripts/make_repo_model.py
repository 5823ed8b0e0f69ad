"""Make the model that recipes/env_repo_located.toml trains: a tiny char-level Qwen2 (context
1024) that knows the located tier's tool protocol (rlvr.envs.repo.located) but fixes poorly.

    python scripts/make_repo_model.py [--out models/tiny-repo] [--steps N] [--seed S]

Episodes of a sloppy teacher on the located tier's training modules (the 3 held-out modules
are never seen): the 166 training tasks' lines, and every other one-token mutation site of the
same 9 modules (rlvr.envs.repo.mutations: compare, operator, off-by-one, a default), 226
places in all. The first observation is rendered as a run renders it
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
hang on the 9 training file names; independently, DISGUISE of all episodes make up the line's
names and its other integer constants (and, in half of those, the numbers being swapped, their
difference kept), so that the model learns to copy a token from the line it is shown rather
than recall one of the 226 lines. The disguise renames every name outside _KEEP, method names
and words inside string literals included (the shipped model was made so).
Only the policy's turn (and its EOS) is trained on. Deterministic from its seed on a given
machine and thread count. No sandbox is needed: the teacher never runs the tests.
"""

from __future__ import annotations

import json
import keyword
import random
import re
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
from rlvr.envs.repo.mutations import mutations

TEACHER = (0.3, 0.5, 0.2)  # (right, mirror, other)
DISGUISE = 0.75  # the share of episodes whose names and constants are made up
SEEDS = Path(__file__).resolve().parents[1] / "src/rlvr/envs/repo/seed_modules"
_KEEP = set(keyword.kwlist) | {"len", "range", "min", "max", "abs", "sum", "int", "str", "float", "list", "dict",
                               "set", "tuple", "sorted", "round", "enumerate", "zip", "divmod", "isinstance", "self"}
CONTEXT = 1024  # positions (RoPE: no weights); episodes use <= 250, but a run checks the problem statement too
TRAIN = Path(__file__).resolve().parents[1] / "src/rlvr/envs/repo/data/located_train.jsonl"
TEST = TRAIN.with_name("located_test.jsonl")  # its modules must never be seen
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


def sites(modules: set[str]) -> list[Location]:
    """Every one-token mutation site of `modules` (seed modules) as the located tier shows it:
    the mutated line as `text`, the module's own line as `fixed`."""
    found = []
    for name in sorted(modules):
        for m in mutations((SEEDS / f"{name}.py").read_text()):
            where = Location(f"{name}.py", m.line, m.new_line.rstrip("\n"), m.old_line.rstrip("\n"))
            if not m.delete and token_fix(where) is not None:
                found.append(where)
    return found


def places() -> list[Location]:
    """The teacher's lines: the training tasks' and every other site of their modules, sorted
    (so that the seeded draws do not depend on set order); refuses a held-out module."""
    located = {locate(t) for t in load_repo_tasks(TRAIN, None)}
    modules = {w.path.removesuffix(".py") for w in located}
    held_out = {locate(t).path.removesuffix(".py") for t in load_repo_tasks(TEST, None)}
    if modules & held_out:
        raise SystemExit(f"{TRAIN.name} holds held-out modules {sorted(modules & held_out)}")
    return sorted(located | set(sites(modules)), key=lambda w: (w.path, w.line, w.text))


_WORD = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b|\b\d+\b")  # a name or an integer constant


def _made_up(rng: random.Random) -> str:
    name = rng.choice("abcdefghijklmnopqrstuvwxyz") + "".join(
        rng.choice("abcdefghijklmnopqrstuvwxyz_0123456789") for _ in range(rng.randint(0, 9)))
    return name if name not in _KEEP else name + "_"


def disguise(where: Location, rng: random.Random) -> Location:
    """`where` with its names and its other integer constants made up, the same in the buggy and
    the fixed line; with probability 1/2 the swapped numbers too (their difference kept).
    `where` itself when the made-up line would no longer be a one-token fix."""
    old, new = token_fix(where)
    numbers = {old: old, new: new}  # the swapped tokens kept, unless made up below
    if old.isdigit() and new.isdigit() and rng.random() < 0.5:
        base = rng.randint(max(0, int(new) - int(old)), 60)
        numbers = {old: str(base + int(old) - int(new)), new: str(base)}
    names: dict[str, str] = {}

    def swap(m: re.Match) -> str:
        token = m.group(0)
        if token.isdigit():
            return numbers.setdefault(token, str(rng.randint(0, 99)))
        if token in _KEEP or token in ("True", "False", "None"):
            return token
        return names.setdefault(token, _made_up(rng))

    made = Location(where.path, where.line, _WORD.sub(swap, where.text), _WORD.sub(swap, where.fixed))
    return made if token_fix(made) is not None else where


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
    if rng.random() < DISGUISE:
        where = disguise(where, rng)
    old, new = teacher_swap(where, rng)
    prompt = renderer.prompt_ids(f"{INSTRUCTIONS}{path} line {line}: {where.text.strip()}\n")
    turn = renderer.encode(call(old, new)) + [renderer.tokenizer.eos_token_id]
    return prompt + turn, [-100] * len(prompt) + turn


def main() -> None:
    from rlvr.models import build_char_tokenizer, tiny_qwen2

    args = sft_parser(__doc__, out="models/tiny-repo", steps=2000, batch=24, lr=3e-3).parse_args()
    torch.set_num_threads(2)
    start, rng = time.time(), random.Random(args.seed)
    lines = places()
    out = Path(args.out)
    model = tiny_qwen2(hidden_size=96, intermediate_size=384, num_layers=4, num_heads=4, num_kv_heads=2,
                       max_positions=CONTEXT, seed=args.seed)
    model.config.save_pretrained(out)
    build_char_tokenizer().save_pretrained(out)
    renderer = PlainRenderer(load_tokenizer(out))
    loss = fine_tune(model, lambda: [episode(renderer, rng.choice(lines), rng) for _ in range(args.batch)],
                     steps=args.steps, lr=args.lr, pad=renderer.tokenizer.pad_token_id, decay_tail=0.3)
    model.save_pretrained(out, safe_serialization=True)
    write_card(out, model, args, start, loss, data=f"sloppy-teacher fix calls on {len(lines)} one-token sites of {TRAIN.name}'s "
               f"9 modules; (right, mirror, other) = {TEACHER}; half the episodes renamed and renumbered, "
               f"{DISGUISE} with made-up names and constants",
               instructions=INSTRUCTIONS, context=CONTEXT)


if __name__ == "__main__":
    main()
