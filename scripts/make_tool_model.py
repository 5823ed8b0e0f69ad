"""Make the tool-use model that recipes/env_python_demo.toml trains: a tiny char-level Qwen2
(context 256) that knows how to call the `python` tool and read its answer, but uses it poorly.

    python scripts/make_tool_model.py [--out models/tiny-tool] [--steps N] [--seed S]

The task is two-digit multiplication (`23*47=`, the train split of the recipe's [task]: the
held-out problems are never seen). A char-level model this small cannot multiply in its head;
the `python(code)` tool can. Supervised fine-tuning on episodes of a sloppy teacher, played
against the real tool environment (rlvr.envs.tool_env.ToolEnv, its ToolBox and observation
format, rendered by rlvr.envs.PlainRenderer: the tokens a run will see). Each episode the
teacher does one of:

    right call   <tool_call>{"name":"python","arguments":{"code":"print(23*47)"}}</tool_call>
                 then copies the tool's output ("1081")             -> reward 1
    wrong call   the same call with "+" for "*" (print(23+47)), then copies "70"   -> 0
    in its head  answers the product directly: the model cannot learn it    -> ~0

with probabilities (right, wrong, head) = SURE when the first operand ends in 0 or 1 and
SLOPPY otherwise. Why prompt-dependent: the before/after figure is greedy, and a greedy
char-level model takes the likeliest character at each choice, so a mixture that is the same
for every prompt would be all right or all wrong. With SLOPPY the call is the likeliest first
move but "+" beats "*" inside it, so greedy play fails on ~80% of the problems, while sampling
(temperature 1) still finds the right call a quarter of the time: the signal GRPO over
trajectories needs. Only the policy's turns are trained on (prompt and observation tokens
carry label -100). Deterministic from its seed on a given machine and thread count.

The tool here is a stand-in that evaluates only `print(A op B)` (no sandbox, so this script
runs where bubblewrap does not); tests/envs/test_tool_demo.py checks that it prints what the
sandboxed `python` tool prints.
"""

from __future__ import annotations

import json
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
from rlvr.envs.tool_env import ToolEnv
from rlvr.envs.tools import ToolBox, make_tool
from rlvr.models import build_char_tokenizer, tiny_qwen2
from rlvr.rewards.exact_verifier import ExactVerifier
from rlvr.tasks.arithmetic import arithmetic_splits
from rlvr.types import Sample

# What recipes/env_python_demo.toml sets ([task], env.instructions); a test checks they agree.
INSTRUCTIONS = "Tool: python(code).\n"
TASK = {"seed": 0, "test_size": 200, "low": 10, "high": 99, "ops": "*"}
SURE, SLOPPY = (0.6, 0.2, 0.2), (0.25, 0.45, 0.3)  # (right call, wrong call, in its head)
CONTEXT = 256
_EXPR = re.compile(r"print\((\d+)([*+])(\d+)\)")


def offline_python(code: str) -> str:
    """Run a Python program and return what it printed (only `print(A*B)` / `print(A+B)`).

    Args:
        code: the whole program; print what you want to see.
    """
    m = _EXPR.fullmatch(code)
    if m is None:
        raise ValueError(f"the stand-in runs only print(A*B) or print(A+B), not {code!r}")
    a, op, b = int(m.group(1)), m.group(2), int(m.group(3))
    return f"{a * b if op == '*' else a + b}\n"


def tool_call(code: str) -> str:
    """The call as the model writes it (compact JSON: fewer characters to generate)."""
    body = json.dumps({"name": "python", "arguments": {"code": code}}, separators=(",", ":"))
    return f"<tool_call>{body}</tool_call>"


def teacher_first_turn(sample: Sample, rng: random.Random) -> str:
    """The teacher's first turn on `a*b=`: a call (right or wrong) or an answer from its head."""
    a, b = sample.prompt.rstrip("=").split("*")
    right, wrong, _ = SURE if int(a) % 10 in (0, 1) else SLOPPY
    u = rng.random()
    if u < right:
        return tool_call(f"print({a}*{b})")
    if u < right + wrong:
        return tool_call(f"print({a}+{b})")
    return sample.answer


def episode(env_box: ToolBox, renderer: PlainRenderer, sample: Sample, rng: random.Random) -> tuple[list[int], list[int]]:
    """(ids, labels) of one teacher episode: labels -100 except on the policy's turns and EOS."""
    env = ToolEnv(env_box, ExactVerifier(), INSTRUCTIONS)
    eos = renderer.tokenizer.eos_token_id
    ids = renderer.prompt_ids(env.reset(sample, 0))
    labels = [-100] * len(ids)
    action = teacher_first_turn(sample, rng)
    for _ in range(2):
        turn = renderer.encode(action) + [eos]
        ids, labels = ids + turn, labels + turn
        result = env.step(action)
        if result.done:
            break
        obs = renderer.observation_ids(result.observation, eos)
        ids, labels = ids + obs, labels + [-100] * len(obs)
        action = result.observation.removeprefix("python: ").strip()  # copy what the tool printed
    return ids, labels


def main() -> None:
    args = sft_parser(__doc__, out="models/tiny-tool", steps=600).parse_args()
    torch.set_num_threads(2)
    start, rng = time.time(), random.Random(args.seed)
    train, _ = arithmetic_splits(**TASK)
    out = Path(args.out)
    model = tiny_qwen2(hidden_size=64, intermediate_size=256, num_layers=2, num_heads=4, num_kv_heads=2,
                       max_positions=CONTEXT, seed=args.seed)
    # Render with the tokenizer as a run loads it from the finished folder (config.json beside
    # it): tests/models/test_char_tokenizer.py checks that this equals build_char_tokenizer().
    model.config.save_pretrained(out)
    build_char_tokenizer().save_pretrained(out)
    tokenizer = load_tokenizer(out)
    renderer, box = PlainRenderer(tokenizer), ToolBox([make_tool(offline_python, name="python")])
    loss = fine_tune(model, lambda: [episode(box, renderer, rng.choice(train), rng) for _ in range(args.batch)],
                     steps=args.steps, lr=args.lr, pad=tokenizer.pad_token_id, decay_tail=0.3)
    model.save_pretrained(out, safe_serialization=True)
    write_card(out, model, args, start, loss,
               data=f"sloppy-teacher python-tool episodes on the train split of arithmetic {TASK}; "
                    f"(right call, wrong call, in its head) = {SURE} when the first operand ends in 0 or 1, "
                    f"else {SLOPPY}",
               instructions=INSTRUCTIONS, context=CONTEXT)


if __name__ == "__main__":
    main()
