"""Shared fixtures: a tiny judge model folder, the model loaded here, and an in-process server
(uvicorn in a thread on 127.0.0.1, its limits chosen by the test)."""

from __future__ import annotations

import contextlib
import json
import threading
import time
import urllib.error
import urllib.request

import pytest


@pytest.fixture(scope="session")
def judge_dir(tmp_path_factory):
    """A random tiny Qwen2 with a 1024-token context (the judge prompt is long for 64)."""
    from rlvr.models import build_char_tokenizer, tiny_qwen2

    path = tmp_path_factory.mktemp("judge")
    model = tiny_qwen2(hidden_size=32, intermediate_size=64, num_layers=1, num_heads=2, num_kv_heads=1,
                       max_positions=1024, seed=3)
    tok = build_char_tokenizer()
    tok.model_max_length = 1024
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return path


@pytest.fixture(scope="session")
def local(judge_dir):
    from rlvr.engines.loading import load_model, load_tokenizer

    return load_model(judge_dir), load_tokenizer(judge_dir)


@contextlib.contextmanager
def running(service, limits):
    """Serve `service` under `limits` on a free loopback port; yields (base URL, app)."""
    from rlvr.serve.app import bind, build_app, uvicorn_server

    app = build_app(service, limits)
    sock = bind("127.0.0.1", 0)
    server = uvicorn_server(app, limits)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the in-process server did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/v1", app
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


def service_of(local, **kw):
    """A ModelService over the in-process engine, as `rlvr serve` builds it for the demo recipe."""
    from rlvr.engines import HFEngine
    from rlvr.serve.model_service import ModelService

    model, tokenizer = local
    return ModelService(HFEngine(model, tokenizer, seed=0), model, tokenizer, "tiny", **kw)


@pytest.fixture
def make_service(local):
    from rlvr.serve.model_service import ModelService

    def make(**kw):
        return service_of(local, **kw)
    return make


def post(base: str, body: object = None, raw: bytes | None = None, timeout: float = 30,
         headers: dict | None = None) -> tuple[int, dict, dict]:
    """(status, JSON reply, headers) of a POST to /completions."""
    data = raw if raw is not None else json.dumps(body).encode()
    request = urllib.request.Request(base + "/completions", data=data,
                                     headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as reply:
            return reply.status, json.load(reply), dict(reply.headers)
    except urllib.error.HTTPError as e:
        return e.code, json.load(e), dict(e.headers)


@pytest.fixture
def serve_in_process():
    """`with serve_in_process(service, limits) as (base, app):` (fixtures: importlib mode
    does not let test files import conftest)."""
    return running


@pytest.fixture
def http_post():
    return post


@pytest.fixture(scope="module")
def fuzz_server(local):
    """One server for a module's fuzz examples: small token cap so valid bodies stay fast."""
    from rlvr.serve.limits import ServeLimits
    from rlvr.serve.model_service import ModelService

    service = service_of(local, max_request_tokens=2000)
    with running(service, ServeLimits(max_body_bytes=1 << 20, request_timeout_s=20)) as (base, app):
        yield base, app
