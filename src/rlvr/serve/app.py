"""The HTTP layer: a Starlette app run by uvicorn (loopback by default).

    GET  /v1/models        the served model
    POST /v1/completions   see completions.py for the fields
    GET  /v1/stats         the engine worker's counters (batches, refusals, timeouts)

Errors are JSON, `{"error": {"message", "type", "param", "code"}}`: 400 for a body that is not
UTF-8 JSON (syntax, nesting, a huge integer literal), a field out of range, or a request over
the token cap; 404 for an unknown path or model; 405 for a wrong method; 413 for a body over
`max_body_bytes`; 503 with Retry-After when `queue_size` requests already wait; 504 past
`request_timeout_s`; 415 for a body not declared `application/json`. uvicorn keeps a listen
backlog of 2048; the connection guard (guard.py) answers a request that does not arrive within
`read_timeout_s` with a 408 and connections over its caps with a 503, in the same JSON.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from rlvr.errors import ConfigError
from rlvr.serve.batching import EngineWorker
from rlvr.serve.completions import BadRequest, parse_request
from rlvr.serve.limits import ServeLimits
from rlvr.serve.model_service import ModelService
from rlvr.serve.refusals import error_body, error_headers
from rlvr.serve.request_body import BodyTooLarge, decode_json, read_capped, require_json

def error_response(err: BadRequest) -> JSONResponse:
    headers = error_headers(err)
    if isinstance(err, BodyTooLarge) and not err.drained:
        headers["Connection"] = "close"  # the rest of the body is unread: this connection is done
    return JSONResponse(error_body(err), status_code=err.status, headers=headers)


def build_app(service: ModelService, limits: ServeLimits) -> Starlette:
    """The app; its lifespan starts the engine worker (`app.state.worker`) and stops it."""

    async def completions(request: Request) -> JSONResponse:
        arrived = time.monotonic()
        try:
            raw = await read_capped(request.stream(), request.headers.get("content-length"), limits.max_body_bytes)
        except ClientDisconnect:  # gone, or closed by the guard's read timeout: nobody to answer
            raise BadRequest("the client went away before its body arrived", status=408) from None
        require_json(request.headers.get("content-type"))
        req = parse_request(decode_json(raw), service.name, service.vocab_size)
        worker = request.app.state.worker
        worker.refuse_if_full()  # before the tokeniser's work, not only after it
        encoded = await run_in_threadpool(service.encode, req)  # tokenising off the event loop
        return JSONResponse(await worker.answer(encoded, arrived))

    async def models(request: Request) -> JSONResponse:
        return JSONResponse(service.models())

    async def stats(request: Request) -> JSONResponse:
        return JSONResponse(request.app.state.worker.stats_dict())

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette):
        app.state.worker = EngineWorker(service, limits)
        task = asyncio.create_task(app.state.worker.run(), name="rlvr-engine-worker")
        try:
            yield
        finally:
            task.cancel()
            app.state.worker.close()

    routes = [Route(path, completions, methods=["POST"]) for path in ("/v1/completions", "/v1/completions/")]
    routes += [Route("/v1/models", models, methods=["GET"]), Route("/v1/stats", stats, methods=["GET"])]
    handlers = {BadRequest: _bad_request, HTTPException: _route_error, Exception: _crash}
    return Starlette(routes=routes, exception_handlers=handlers, lifespan=lifespan)


async def _bad_request(request: Request, e: BadRequest) -> JSONResponse:
    return error_response(e)


async def _crash(request: Request, e: Exception) -> JSONResponse:
    """A bug: still a JSON answer (uvicorn logs the traceback), never a dropped connection."""
    return error_response(BadRequest(f"internal error: {type(e).__name__}: {str(e)[:200]}", status=500))


async def _route_error(request: Request, e: HTTPException) -> JSONResponse:
    where = f"{request.method} {request.url.path}"
    if e.status_code == 404:
        return error_response(BadRequest(f"no route {where}; use GET /v1/models or POST /v1/completions", status=404))
    if e.status_code == 405:
        return error_response(BadRequest(f"method not allowed: {where}", status=405))
    return error_response(BadRequest(str(e.detail), status=e.status_code))


def bind(host: str, port: int) -> socket.socket:
    """A socket bound to host:port (not yet listening: connections are refused until uvicorn starts)."""
    if not 0 <= port <= 65535:
        raise ConfigError(f"--port must be in [0, 65535], got {port}")
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        sock = socket.socket(family, kind, proto)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
    except OSError as e:
        raise ConfigError(f"cannot listen on {host}:{port} ({e.strerror or e})") from None
    return sock


def uvicorn_server(app: Starlette, limits: ServeLimits, *, verbose: bool = False):
    """The uvicorn server for `app` (`.run(sockets=[sock])` blocks until `.should_exit`)."""
    import uvicorn

    from rlvr.serve.guard import guarded_protocol

    # No limit_concurrency: the guard caps connections itself and answers over the cap in JSON.
    config = uvicorn.Config(app, log_level="info" if verbose else "warning", access_log=verbose,
                            backlog=2048, http=guarded_protocol(limits), lifespan="on",
                            timeout_graceful_shutdown=5)
    return uvicorn.Server(config)


def serve(app: Starlette, sock: socket.socket, limits: ServeLimits, *, verbose: bool = False) -> None:
    """Run uvicorn on `sock` until interrupted."""
    uvicorn_server(app, limits, verbose=verbose).run(sockets=[sock])
