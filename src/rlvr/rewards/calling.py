"""How every caller invokes a reward function (training, evaluation, `rlvr verify`).

A reward function is `fn(response, gold)`. One that judges the response against its question
(a generative judge, rules, the probability reward) sets the attribute `needs_prompt = True`
and is called `fn(response, gold, prompt=prompt)`.
"""

from __future__ import annotations

from typing import Any, Callable


def call_reward(fn: Callable[..., Any], response: str, gold: str, prompt: str) -> Any:
    if getattr(fn, "needs_prompt", False):
        return fn(response, gold, prompt=prompt)
    return fn(response, gold)
