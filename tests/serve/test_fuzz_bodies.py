"""Fuzzed request bodies against the real HTTP server (in-process uvicorn, 127.0.0.1): malformed
JSON, deep nesting, wrong types, huge numbers, non-UTF-8 bytes, lone surrogates, missing
fields. Every reply is a JSON 4xx error with a message (or a 200 for a body that happens to be
a valid request); never a 5xx, a dropped connection or a hang. About 5-20 s (400 examples)."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from rlvr.serve.completions import SUPPORTED

json_leaf = st.one_of(st.none(), st.booleans(), st.integers(-(10 ** 30), 10 ** 30), st.floats(allow_nan=False),
                      st.text(max_size=20))
json_value = st.recursive(json_leaf, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                             st.dictionaries(st.text(max_size=8), inner, max_size=4)),
                          max_leaves=12)
small_ok = {"prompt": st.one_of(st.text(min_size=1, max_size=8), st.lists(st.text(min_size=1, max_size=8), max_size=3)),
            "max_tokens": st.integers(-2, 6), "n": st.integers(-1, 3), "temperature": st.floats(-1, 3),
            "logprobs": st.integers(-1, 200), "stop": st.one_of(st.text(max_size=3), st.lists(st.text(max_size=3), max_size=5))}


def encoded(value) -> bytes:
    return json.dumps(value).encode()


def nested(depth: int, opener: bytes, closer: bytes) -> bytes:
    return opener * depth + closer * depth


# Each strategy yields raw body bytes.
malformed = st.one_of(st.binary(max_size=64), st.text(max_size=40).map(str.encode),
                      json_value.map(lambda v: encoded(v)[:-1] if len(encoded(v)) > 1 else b"{"))
deep = st.one_of(st.integers(500, 200_000).map(lambda d: nested(d, b"[", b"]")),
                 st.integers(500, 50_000).map(lambda d: b'{"prompt":' * d + b'"a"' + b"}" * d),
                 st.integers(100, 5_000).map(lambda d: b'{"prompt": "a", "stop": ' + nested(d, b"[", b"]") + b"}"))
wrong_types = st.fixed_dictionaries({}, optional={k: json_value for k in sorted(SUPPORTED)}).map(encoded)
# Mostly in-range values, so that a share of these are valid and reach the engine.
mixed_fields = st.fixed_dictionaries({"prompt": small_ok["prompt"]}, optional={
    "seed": json_value, "top_p": st.floats(0, 1.5), "model": st.sampled_from(["tiny", "gpt-9"]),
    **{k: v for k, v in small_ok.items() if k != "prompt"}}).map(encoded)
huge_numbers = st.sampled_from(["max_tokens", "n", "temperature", "seed", "logprobs", "top_p"]).flatmap(
    lambda key: st.sampled_from(["9" * 5000, "-" + "9" * 400, "1e999", "-1e400", "NaN", "Infinity", "1" + "0" * 30])
    .map(lambda num: b'{"prompt": "a", "' + key.encode() + b'": ' + num.encode() + b"}"))
not_utf8 = st.binary(min_size=1, max_size=8).map(lambda b: b'{"prompt": "' + b"\xff" + b + b'"}')
surrogates = st.sampled_from(["prompt", "stop"]).map(lambda k: b'{"prompt": "a", "' + k.encode() + b'": "x\\ud800y"}')
bodies = st.one_of(malformed, deep, wrong_types, mixed_fields, huge_numbers, not_utf8, surrogates)


def check_reply(base: str, body: bytes) -> tuple[int, dict]:
    import http.client
    from urllib.parse import urlsplit

    url = urlsplit(base)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=20)  # a hang fails here
    try:
        conn.request("POST", url.path + "/completions", body=body, headers={"Content-Type": "application/json"})
        reply = conn.getresponse()
        status, raw = reply.status, reply.read()
    finally:
        conn.close()
    out = json.loads(raw)  # every reply is JSON
    assert status == 200 or 400 <= status < 500, (status, out, body[:200])
    if status != 200:
        message = out["error"]["message"]
        assert isinstance(message, str) and message and len(message) < 1000, out
    return status, out


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow, HealthCheck.data_too_large])
@given(body=bodies)
def test_every_fuzzed_body_gets_a_json_answer(fuzz_server, body):
    base, _ = fuzz_server
    event(f"HTTP {check_reply(base, body)[0]}")  # --hypothesis-show-statistics: the mix of outcomes


@pytest.mark.parametrize("body, says", [
    (b"[" * 200_000 + b"]" * 200_000, "nest too deeply"),
    (b'{"prompt": "a", "n": ' + b"9" * 5000 + b"}", "not acceptable JSON"),
    (b'{"prompt": "a", "temperature": 1e999}', "'temperature' must be a number"),
    (b'{"prompt": "a", "temperature": ' + b"9" * 400 + b"}", "'temperature' must be a number"),
    (b'{"prompt": "\xff"}'.replace(b"\\xff", b"\xff"), "not UTF-8"),
    (b'{"prompt": "x\\ud800"}', "lone surrogate"),
    (b'{"n": 2}', "'prompt' must be"),
    (b'{"prompt": {"a": 1}}', "'prompt' must be a string"),
    (b'{"prompt": "a", "max_tokens": "5"}', "'max_tokens' must be an integer"),
    (b'{"prompt": "a", "top_p": 1e-100}', "'top_p' must be at least 1e-06"),
    (b'{"prompt": "a", "temperature": 1e-40}', "'temperature' must be 0 (greedy) or at least 1e-06"),
    (b'{"prompt": "a"', "not valid JSON"),
])
def test_named_bad_bodies_get_their_reason(fuzz_server, body, says):
    status, out = check_reply(fuzz_server[0], body)
    assert status == 400 and says in out["error"]["message"], out


def test_the_fuzzed_server_had_no_engine_errors(fuzz_server):
    base, app = fuzz_server
    assert check_reply(base, encoded({"prompt": "ok", "max_tokens": 2}))[0] == 200
    assert app.state.worker.stats.engine_errors == 0
