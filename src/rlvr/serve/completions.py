"""The `/v1/completions` request: checked into a `CompletionRequest`, answered by the model.

Follows OpenAI's legacy completions API for the fields it supports: `model`, `prompt` (a string
or a list of strings), `n`, `max_tokens` (default 16), `temperature` (0 = greedy), `top_p`,
`seed`, `stop` (a string or a list of up to 4), `logprobs` (how many top tokens per position),
and `stream`/`echo` only when false. `choices` come prompt by prompt, n each, index
i * n + j. With `logprobs` set, each choice has `logprobs` = {tokens, token_logprobs,
top_logprobs, text_offset}; the log-probabilities are those of the model's untempered
distribution (one forward pass over prompt + completion after sampling), whatever the
temperature. Tokens are reported up to the stop string (excluded, like the text); an EOS the
model sampled is reported as its token. Deviations from OpenAI: `model` may be omitted, and
`logprobs` may go up to the vocabulary size (OpenAI caps it at 5).
A temperature or top_p in (0, 1e-6) is refused (float32 sampling overflows there), and so are
a negative `seed` (-1 means "random" elsewhere), a NUL character in a prompt or stop string,
and (in app.py) a body whose Content-Type is not application/json (a 415).
Anything else is a `BadRequest` naming the field.
"""

from __future__ import annotations

import math
import reprlib
from dataclasses import dataclass

SUPPORTED = {"model", "prompt", "n", "max_tokens", "temperature", "top_p", "seed", "stop", "logprobs",
             "stream", "echo", "user"}


_SHOW = reprlib.Repr()  # keyword arguments only from Python 3.12
_SHOW.maxlevel, _SHOW.maxstring, _SHOW.maxother, _SHOW.maxlong = 3, 60, 60, 40
_SHOW.maxlist = _SHOW.maxdict = 6


def show(value: object) -> str:
    """A short repr for error messages: a body's value may be megabytes long or deeply nested."""
    return _SHOW.repr(value)


class BadRequest(Exception):
    """A request the server refuses: HTTP `status` and a message naming the field (`param`)."""

    def __init__(self, message: str, param: str | None = None, status: int = 400,
                 code: str | None = None):
        super().__init__(message)
        self.message, self.param, self.status, self.code = message, param, status, code


@dataclass(frozen=True)
class CompletionRequest:
    prompts: tuple[str, ...]
    n: int = 1
    max_tokens: int = 16
    temperature: float = 1.0
    top_p: float = 1.0
    seed: int | None = None
    stop: tuple[str, ...] = ()
    logprobs: int | None = None


def _int(body: dict, key: str, default: int | None, low: int, high: int) -> int | None:
    value = body.get(key, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise BadRequest(f"'{key}' must be an integer in [{low}, {high}], got {show(value)}", key)
    return value


def _float(body: dict, key: str, default: float, low: float, high: float, low_open: bool = False) -> float:
    value = body.get(key, default)
    if value is None:
        return default
    # math.isfinite(10**400) raises OverflowError; a big int compares with the bounds exactly.
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and \
        (isinstance(value, int) or math.isfinite(value))
    if not ok or value > high or value < low or (low_open and value == low):
        side = "(" if low_open else "["
        raise BadRequest(f"'{key}' must be a number in {side}{low}, {high}], got {show(value)}", key)
    return float(value)


# Below this, float32 sampling breaks: logits / 1e-38 overflow to inf, a top_p of 1e-46
# underflows to 0 and keeps no token (found by tests/serve/test_fuzz_bodies.py).
TINY = 1e-6


def _not_tiny(body: dict, key: str, value: float, or_zero: str) -> float:
    if 0 < value < TINY:
        raise BadRequest(f"'{key}' must be {or_zero} at least {TINY:g}, got {show(body.get(key))}".replace("  ", " "), key)
    return value


def _seed(body: dict) -> int | None:
    """Seeds are >= 0: other servers read -1 as "pick one at random", which here would be one
    fixed seed, the same text every time; a client that wants that omits the field."""
    if body.get("seed") == -1:
        raise BadRequest("'seed' = -1 is not \"random\" here: omit 'seed' for the server's own seeding, "
                         "or give an integer in [0, 2**63 - 1]", "seed")
    return _int(body, "seed", None, 0, (1 << 63) - 1)


def _strings(body: dict, key: str, most: int | None) -> tuple[str, ...]:
    value = body.get(key)
    if value is None:
        return ()
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(s, str) for s in items) or \
            (most is not None and len(items) > most):
        limit = f" (at most {most})" if most else ""
        raise BadRequest(f"'{key}' must be a string or a list of strings{limit}, got {show(value)}", key)
    return tuple(items)


def _check_encodable(key: str, text: str) -> None:
    """JSON allows lone surrogates (\\ud800); no tokenizer or UTF-8 reply can carry them. A NUL
    is refused too: no prompt means one, and C code along the way (a tokenizer's, a log
    reader's) may take it for the end of the text."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise BadRequest(f"'{key}' holds a lone surrogate {text[e.start]!r} at character {e.start}; "
                         "it is not valid Unicode text", key) from None
    if "\0" in text:
        raise BadRequest(f"'{key}' holds a NUL character at character {text.index(chr(0))}", key)


def parse_request(body: object, served: str, vocab_size: int) -> CompletionRequest:
    """Check a decoded JSON body against the supported fields; BadRequest on the first problem."""
    if not isinstance(body, dict):
        raise BadRequest(f"the request body must be a JSON object, got {type(body).__name__}")
    unknown = sorted(set(body) - SUPPORTED)
    if unknown:
        raise BadRequest(f"unsupported field(s) {unknown}; supported: {sorted(SUPPORTED)}", unknown[0])
    if body.get("model", served) != served:
        raise BadRequest(f"the model {show(body['model'])} does not exist; this server serves {served!r}",
                         "model", status=404, code="model_not_found")
    for flag in ("stream", "echo"):
        if body.get(flag):
            raise BadRequest(f"'{flag}' is not supported (it must be false)", flag)
    prompts = _strings(body, "prompt", None)
    if not prompts or not all(prompts):
        raise BadRequest("'prompt' must be a non-empty string or a list of non-empty strings", "prompt")
    for key, texts in (("prompt", prompts), ("stop", _strings(body, "stop", 4))):
        for text in texts:
            _check_encodable(key, text)
    return CompletionRequest(
        prompts=prompts, n=_int(body, "n", 1, 1, 128), max_tokens=_int(body, "max_tokens", 16, 1, 1 << 16),
        temperature=_not_tiny(body, "temperature", _float(body, "temperature", 1.0, 0.0, 2.0), "0 (greedy) or"),
        top_p=_not_tiny(body, "top_p", _float(body, "top_p", 1.0, 0.0, 1.0, low_open=True), ""),
        seed=_seed(body), stop=_strings(body, "stop", 4),
        logprobs=_int(body, "logprobs", None, 0, vocab_size))
