"""The one JSON shape of every refusal, whoever sends it: the app's handlers (through
`error_response` in app.py) or the connection guard (guard.py), which answers before any
request reaches the app and so writes the HTTP bytes itself.

    {"error": {"message": str, "type": "invalid_request_error" | "server_error",
               "param": str | null, "code": str | null}}

503s (busy, too many connections) carry `Retry-After`.
"""

from __future__ import annotations

import http
import json

from rlvr.serve.completions import BadRequest

RETRY_AFTER_S = 1


def error_body(err: BadRequest) -> dict:
    kind = "invalid_request_error" if err.status < 500 else "server_error"
    return {"error": {"message": err.message, "type": kind, "param": err.param, "code": err.code}}


def error_headers(err: BadRequest) -> dict[str, str]:
    return {"Retry-After": str(RETRY_AFTER_S)} if err.status == 503 else {}


def raw_response(err: BadRequest) -> bytes:
    """A whole HTTP/1.1 response for `err` that closes the connection (the guard's answers)."""
    body = json.dumps(error_body(err)).encode()
    lines = [f"HTTP/1.1 {err.status} {http.HTTPStatus(err.status).phrase}",
             "content-type: application/json", f"content-length: {len(body)}", "connection: close"]
    lines += [f"{k.lower()}: {v}" for k, v in error_headers(err).items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body
