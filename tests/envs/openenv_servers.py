"""Servers for the OpenEnv tests: uvicorn in a thread of the test process, on a free port.
`threaded(app)` serves any ASGI app; `garbage_app(reply)` is a WebSocket `/ws` that answers
every message with `reply` (the malformed-payload fault); `SlowEnv` and `FlakyEnv` are rlvr
envs to serve through rlvr.envs.openenv_server (the slow and the erroring server)."""

from __future__ import annotations

import socket
import threading
import time
from contextlib import contextmanager

import uvicorn
from starlette.applications import Starlette
from starlette.routing import WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from rlvr.envs.guess_number import GuessNumberEnv


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def threaded(app):
    """`app` served on 127.0.0.1 for the block; yields its http:// URL."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="critical"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline, "the test server did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


def garbage_app(reply: str) -> Starlette:
    async def ws(websocket: WebSocket) -> None:
        await websocket.accept()
        try:
            while True:
                await websocket.receive_text()
                await websocket.send_text(reply)
        except WebSocketDisconnect:
            pass

    return Starlette(routes=[WebSocketRoute("/ws", ws)])


class SlowEnv(GuessNumberEnv):
    """Guess-the-number whose every step takes `delay_s`."""

    delay_s = 2.0

    def step(self, action: str):
        time.sleep(self.delay_s)
        return super().step(action)


class FlakyEnv(GuessNumberEnv):
    """Guess-the-number whose reset raises for every fourth seed: the server answers with an error."""

    def reset(self, sample, seed):
        if seed % 4 == 0:
            raise RuntimeError(f"flaky server: no game for seed {seed}")
        return super().reset(sample, seed)
