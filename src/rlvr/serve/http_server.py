"""An OpenAI-compatible HTTP server for one local model (standard library `http.server`).

    GET  /v1/models        the served model
    POST /v1/completions   see completions.py for the fields

Errors are JSON, `{"error": {"message", "type", "param", "code"}}`: 400 for a body that is not
JSON or a field out of range, 404 for an unknown path or model, 413 for a body over 8 MiB.
Requests are handled on threads; the model answers them one at a time (ModelService's lock).
"""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from rlvr.serve.completions import BadRequest, parse_request
from rlvr.serve.model_service import ModelService

MAX_BODY = 8 << 20


class Handler(BaseHTTPRequestHandler):
    server: CompletionServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args) -> None:
        if self.server.verbose:
            super().log_message(format, *args)

    def send_json(self, status: int, payload: dict) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def send_error_json(self, err: BadRequest) -> None:
        kind = "invalid_request_error" if err.status < 500 else "server_error"
        self.send_json(err.status, {"error": {"message": err.message, "type": kind, "param": err.param,
                                              "code": err.code}})

    def do_GET(self) -> None:
        if self.path.rstrip("/") == "/v1/models":
            self.send_json(200, self.server.service.models())
        else:
            self.send_error_json(BadRequest(f"no route GET {self.path}", status=404))

    def do_POST(self) -> None:
        try:
            body = self.read_json()
            if self.path.rstrip("/") != "/v1/completions":
                raise BadRequest(f"no route POST {self.path}; use /v1/completions", status=404)
            service = self.server.service
            request = parse_request(body, service.name, service.vocab_size)
            self.send_json(200, service.complete(request))
        except BadRequest as e:
            self.send_error_json(e)

    def read_json(self) -> object:
        length = self.headers.get("Content-Length")
        if length is None or not length.isdigit():
            raise BadRequest("a Content-Length header is required")
        if int(length) > MAX_BODY:
            self.close_connection = True  # the unread body must not be parsed as a next request
            raise BadRequest(f"the body has {length} bytes, over the limit of {MAX_BODY}", status=413)
        raw = self.rfile.read(int(length))
        try:
            return json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise BadRequest(f"the body is not valid JSON ({e})") from None


class CompletionServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], service: ModelService, *, verbose: bool = False):
        super().__init__(address, Handler)
        self.service, self.verbose = service, verbose
