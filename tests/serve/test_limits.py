"""The server's caps over real HTTP (an in-process uvicorn on 127.0.0.1): each crossing gets a
JSON error with a message and the right status, and 50 concurrent clients all get answers."""

from __future__ import annotations

import http.client
import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit

from rlvr.serve.limits import ServeLimits


def raw_post(base: str, body, timeout: float = 30) -> tuple[int, dict, dict]:
    """POST with http.client, the whole body sent before the reply is read (chunked when
    `body` is an iterator of bytes)."""
    url = urlsplit(base)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=timeout)
    try:
        conn.request("POST", url.path + "/completions", body=body, headers={"Content-Type": "application/json"})
        reply = conn.getresponse()
        return reply.status, json.loads(reply.read()), dict(reply.getheaders())
    finally:
        conn.close()


def test_an_oversized_body_gets_a_413_that_the_client_reads(make_service, serve_in_process):
    limits = ServeLimits(max_body_bytes=1 << 20)
    with serve_in_process(make_service(), limits) as (base, _):
        body = json.dumps({"prompt": "a" * (10 << 20)}).encode()  # 10 MB, like the issue's
        status, out, _ = raw_post(base, body)  # a broken pipe would raise here
        assert status == 413 and "over the limit of 1048576" in out["error"]["message"]
        chunked = (b"x" * (1 << 16) for _ in range(32))  # 2 MiB with no Content-Length
        status, out, _ = raw_post(base, chunked)
        assert status == 413 and "the body has 2097152 bytes" in out["error"]["message"]
        assert raw_post(base, json.dumps({"prompt": "a", "max_tokens": 2}).encode())[0] == 200


def test_deep_nesting_and_the_token_cap_are_400s(make_service, serve_in_process, http_post):
    with serve_in_process(make_service(max_request_tokens=100), ServeLimits()) as (base, _):
        started = time.monotonic()
        status, out, _ = http_post(base, raw=b"[" * 200_000 + b"]" * 200_000)
        assert status == 400 and "nest too deeply" in out["error"]["message"]
        assert time.monotonic() - started < 5
        status, out, _ = http_post(base, {"prompt": ["abcd"] * 5, "n": 2, "max_tokens": 8})
        # 2 x 5 x (4 + 8) = 120 tokens > 100
        assert status == 400 and "asks for 120 tokens" in out["error"]["message"]
        assert out["error"]["code"] == "too_many_tokens"
        assert http_post(base, {"prompt": ["abcd"] * 4, "n": 2, "max_tokens": 8})[0] == 200  # 96


def test_busy_is_a_503_with_retry_after_and_late_is_a_504(make_service, serve_in_process, http_post):
    service = make_service()
    gate = threading.Event()
    real = service.run_batch
    service.run_batch = lambda batch, stop: (gate.wait(10), real(batch, stop))[1]
    with serve_in_process(service, ServeLimits(queue_size=1, request_timeout_s=1.0)) as (base, app):
        with ThreadPoolExecutor(2) as pool:
            held = pool.submit(http_post, base, {"prompt": "a", "max_tokens": 2})
            while app.state.worker.stats.batches == 0:  # the worker holds the first request
                time.sleep(0.01)
            queued = pool.submit(http_post, base, {"prompt": "b", "max_tokens": 2})
            while not app.state.worker.waiting:
                time.sleep(0.01)
            status, out, headers = http_post(base, {"prompt": "c", "max_tokens": 2})
            assert status == 503 and headers["retry-after"] == "1" and "busy" in out["error"]["message"]
            late = held.result()  # the engine is held past the 1 s limit
            gate.set()
            assert late[0] == 504 and "took over 1 s" in late[1]["error"]["message"]
            assert queued.result()[0] in (200, 504)
        assert http_post(base, {"prompt": "d", "max_tokens": 2})[0] == 200


def test_fifty_concurrent_clients_all_get_answers_in_batches(make_service, serve_in_process, http_post):
    """The old server answered 17-35 of 50 (listen backlog 5, connection resets)."""
    with serve_in_process(make_service(), ServeLimits()) as (base, app):
        start = threading.Barrier(50)

        def client(i: int):
            start.wait()
            return http_post(base, {"prompt": f"q{i}", "max_tokens": 8, "temperature": 0})

        with ThreadPoolExecutor(50) as pool:
            replies = list(pool.map(client, range(50)))
        stats = app.state.worker.stats
    assert [r[0] for r in replies] == [200] * 50
    assert all(len(r[1]["choices"]) == 1 for r in replies)
    assert stats.answered == 50 and stats.batches < 50 and stats.largest_batch > 1


def test_unknown_routes_and_methods_are_json(make_service, serve_in_process):
    import urllib.error
    import urllib.request

    with serve_in_process(make_service(), ServeLimits()) as (base, _):
        for url, method, status, says in [(base + "/nope", "GET", 404, "no route GET /v1/nope"),
                                          (base + "/models", "POST", 405, "method not allowed")]:
            request = urllib.request.Request(url, data=b"{}" if method == "POST" else None, method=method)
            try:
                urllib.request.urlopen(request, timeout=10)
                raise AssertionError(f"{method} {url} succeeded")
            except urllib.error.HTTPError as e:
                assert e.code == status and says in json.load(e)["error"]["message"]
