"""Slow and greedy clients (rlvr.serve.guard): a request that does not arrive within
`read_timeout_s` gets a JSON 408 and its connection closes; connections over the per-address or
the total cap get a JSON 503 with Retry-After; other clients are served meanwhile. Also the
request checks that came with it: Content-Type, NUL, seed = -1."""

from __future__ import annotations

import contextlib
import json
import socket
import time
from urllib.parse import urlparse

import pytest

from rlvr.serve.limits import ServeLimits

REQUEST = json.dumps({"prompt": "ab", "max_tokens": 2}).encode()


def connect(base: str, source: str = "127.0.0.1") -> socket.socket:
    """A connection to the server from the loopback address `source` (all of 127/8 is local)."""
    url = urlparse(base)
    sock = socket.socket()
    sock.bind((source, 0))
    sock.settimeout(20)
    sock.connect((url.hostname, url.port))
    return sock


def request_bytes(body: bytes = REQUEST, content_type: str | None = "application/json") -> bytes:
    head = f"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n"
    if content_type:
        head += f"Content-Type: {content_type}\r\n"
    return head.encode() + b"Connection: close\r\n\r\n" + body


def answer(sock: socket.socket) -> tuple[int, dict, dict]:
    """(status, JSON body, lower-cased headers) of the one response on `sock`, read to its close."""
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    sock.close()
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    headers = dict(line.lower().split(": ", 1) for line in lines[1:])
    assert headers["content-type"] == "application/json", data
    return int(lines[0].split()[1]), json.loads(body), headers


def ask(base: str, source: str = "127.0.0.1", raw: bytes | None = None) -> tuple[int, dict, dict]:
    sock = connect(base, source)
    sock.sendall(raw if raw is not None else request_bytes())
    return answer(sock)


@contextlib.contextmanager
def slow_clients(base: str, sources: list[str]):
    """One connection from each source that sends half a request line and stalls."""
    socks = [connect(base, s) for s in sources]
    for sock in socks:
        sock.sendall(b"POST /v1/completions HT")
    try:
        yield socks
    finally:
        for sock in socks:
            sock.close()


def test_slow_headers_and_a_slow_body_get_a_json_408_after_the_read_timeout(make_service, serve_in_process):
    with serve_in_process(make_service(), ServeLimits(read_timeout_s=0.5)) as (base, _):
        t0 = time.monotonic()
        with slow_clients(base, ["127.0.0.1"]) as (sock,):
            status, out, _ = answer(sock)
        assert status == 408 and out["error"]["code"] == "read_timeout"
        assert 0.5 <= time.monotonic() - t0 < 5
        half_body = connect(base)
        half_body.sendall(request_bytes()[:-5])  # headers whole, body 5 bytes short
        status, out, _ = answer(half_body)
        assert status == 408 and "within 0.5 s" in out["error"]["message"]
        assert ask(base)[0] == 200  # the server is none the worse


def test_connections_over_the_per_client_cap_are_refused_in_json_and_others_are_served(make_service, serve_in_process):
    limits = ServeLimits(max_connections_per_client=3, read_timeout_s=30)
    with serve_in_process(make_service(), limits) as (base, _):
        with slow_clients(base, ["127.0.0.2"] * 3):
            status, out, headers = ask(base, "127.0.0.2")
            assert status == 503 and headers["retry-after"] == "1"
            assert out["error"]["code"] == "too_many_connections" and "from 127.0.0.2" in out["error"]["message"]
            assert out["error"]["type"] == "server_error" and set(out["error"]) == {"message", "type", "param", "code"}
            assert ask(base, "127.0.0.1")[0] == 200  # another address is not held back
        time.sleep(0.3)  # the server sees the slow ones close
        assert ask(base, "127.0.0.2")[0] == 200


def test_connections_over_the_total_cap_get_the_same_json_503(make_service, serve_in_process):
    with serve_in_process(make_service(), ServeLimits(max_connections=3, read_timeout_s=30)) as (base, _):
        with slow_clients(base, ["127.0.0.2", "127.0.0.3", "127.0.0.4"]):
            status, out, headers = ask(base, "127.0.0.5")
            assert status == 503 and headers["retry-after"] == "1" and "at most 3 at once" in out["error"]["message"]
        time.sleep(0.3)
        assert ask(base, "127.0.0.5")[0] == 200


def test_a_request_h11_cannot_parse_is_a_json_400(make_service, serve_in_process):
    with serve_in_process(make_service(), ServeLimits()) as (base, _):
        status, out, _ = ask(base, raw=b"NOT HTTP AT ALL\r\n\r\n")
        assert status == 400 and out["error"]["code"] == "bad_http"


CONTENT_TYPES = [(None, 415), ("text/plain", 415), ("application/x-www-form-urlencoded", 415),
                 ("application/json; charset=utf-8", 200), ("Application/JSON", 200)]
REFUSED_BODIES = [({"prompt": "a\u0000b"}, "'prompt' holds a NUL character at character 1"),
                  ({"prompt": "ab", "stop": ["\u0000"]}, "'stop' holds a NUL"),
                  ({"prompt": "ab", "seed": -1}, "omit 'seed'"),
                  ({"prompt": "ab", "seed": -5}, "'seed' must be an integer in [0, ")]


def test_json_content_type_nul_and_negative_seeds(make_service, serve_in_process, http_post):
    with serve_in_process(make_service(), ServeLimits()) as (base, _):
        for content_type, status in CONTENT_TYPES:
            got, out, _ = ask(base, raw=request_bytes(content_type=content_type))
            assert got == status, (content_type, out)
            if status == 415:
                assert "Content-Type must be application/json" in out["error"]["message"]
        for body, says in REFUSED_BODIES:
            status, out, _ = http_post(base, body)
            assert status == 400 and says in out["error"]["message"], body
        assert http_post(base, {"prompt": "ab", "seed": 0, "max_tokens": 2})[0] == 200


def test_a_connection_cap_beyond_the_open_file_limit_is_one_error():
    import resource

    from rlvr.errors import ConfigError
    from rlvr.serve.limits import allow_open_files

    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard == resource.RLIM_INFINITY:
        pytest.skip("no hard limit on open files here")
    with pytest.raises(ConfigError, match=r"--max-connections \d+ needs \d+ open files.*ulimit -Hn"):
        allow_open_files(ServeLimits(max_connections=hard + 1))
