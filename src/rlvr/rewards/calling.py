"""How every caller invokes a verifier or reward function (training, evaluation, `rlvr verify`,
`rlvr audit`, compositions).

The built-in verifiers take their arguments by keyword only, `v(response=..., gold=...)`, so
the two strings cannot be swapped. A user's function is called by name when its parameters are
named `response` and `gold` (their order then does not matter), and positionally,
`fn(response, gold)`, when they are named otherwise (`def reward(r, g)`, a lambda).

One that judges the response against its question (a generative judge, rules, the probability
reward) sets the attribute `needs_prompt = True` and also gets `prompt=prompt`.

A dataset's extra columns (`task.extra_fields`, kept on `Sample.extra`) reach a function that
names them as parameters: `def reward(response, gold, difficulty)` gets `difficulty=...`.
Only parameters named explicitly receive one; `**kwargs` receives none (a wrapper forwarding
`**kwargs` to a verifier would hand it keywords it does not take).
"""

from __future__ import annotations

import inspect
from functools import lru_cache
from typing import Any, Callable

from rlvr.rewards.verdict import Verdict


def _binds_names(fn: Callable[..., Any], prompt: bool) -> bool:
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):  # a builtin without a signature: positional
        return False
    names = {"response": "", "gold": "", **({"prompt": ""} if prompt else {})}
    try:
        signature.bind(**names)
    except TypeError:
        return False
    return True


_binds_names_cached = lru_cache(maxsize=256)(_binds_names)


def by_name(fn: Callable[..., Any], prompt: bool = False) -> bool:
    """True when `fn` accepts `response=` and `gold=` (and `prompt=`) as keywords."""
    try:
        hash(fn)
    except TypeError:  # an unhashable callable (a mutable dataclass): not cached
        return _binds_names(fn, prompt)
    return _binds_names_cached(fn, prompt)


def _named_parameters(fn: Callable[..., Any]) -> frozenset[str]:
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return frozenset()
    keyword = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return frozenset(p.name for p in parameters if p.kind in keyword)


def extra_arguments(fn: Callable[..., Any], extra: dict[str, Any] | None) -> dict[str, Any]:
    """The entries of `extra` whose names are parameters of `fn` (see the module docstring)."""
    if not extra:
        return {}
    names = _named_parameters(fn)
    return {k: v for k, v in extra.items() if k in names}


def call_verifier(fn: Callable[..., Any], response: str, gold: Any, extra: dict[str, Any] | None = None) -> Any:
    """`fn(response=response, gold=gold)`, or `fn(response, gold)` for other parameter names;
    plus the `extra` columns `fn` names."""
    more = extra_arguments(fn, extra)
    if by_name(fn):
        return fn(response=response, gold=gold, **more)
    return fn(response, gold, **more)


def call_reward(fn: Callable[..., Any], response: str, gold: Any, prompt: str,
                extra: dict[str, Any] | None = None) -> Any:
    """As `call_verifier`, with `prompt=` for a function that sets `needs_prompt = True`."""
    if not getattr(fn, "needs_prompt", False):
        return call_verifier(fn, response, gold, extra)
    more = extra_arguments(fn, extra)
    if by_name(fn, prompt=True):
        return fn(response=response, gold=gold, prompt=prompt, **more)
    return fn(response, gold, prompt=prompt, **more)


def function_name(fn: Callable[..., Any]) -> str:
    """`module.qualname` of a reward function (a callable object: its class's)."""
    named = fn if hasattr(fn, "__qualname__") else type(fn)
    return f"{getattr(named, '__module__', '?')}.{named.__qualname__}"


def describe_error(e: BaseException) -> str:
    if isinstance(e, SystemExit):
        return f"SystemExit({e.code!r}) (sys.exit is not a way to return a score)"
    return f"{type(e).__name__}: {e}"


def score_of(out: Any) -> float:
    """The score of what a reward function returned: a Verdict's `.score`, or the number."""
    return out.score if isinstance(out, Verdict) else float(out)
