"""`rlvr serve`: a local OpenAI-compatible completions server for one model folder.

`completions.py` checks requests, `request_body.py` reads and decodes bodies under a cap,
`model_service.py` answers batches of them with the in-process engine, `batching.py` queues and
groups them for one engine thread, `app.py` is the HTTP layer (Starlette on uvicorn),
`limits.py` holds the caps, `command.py` the command line (`rlvr serve`, `python -m rlvr.serve`).
It exists so that the HTTP judge backend (rewards/judge/http_backend.py) can be used, and
tested, against a real server.
"""

import importlib

# Lazy: `rlvr serve --help` and the CLI's parser read ServeLimits without importing torch or
# starlette; the names below load their module on first use.
_HOME = {"build_app": "app", "BadRequest": "completions", "CompletionRequest": "completions",
         "parse_request": "completions", "ServeLimits": "limits", "ModelService": "model_service"}
__all__ = sorted(_HOME)


def __getattr__(name: str):
    if name not in _HOME:
        raise AttributeError(f"module 'rlvr.serve' has no attribute {name!r}")
    return getattr(importlib.import_module(f"rlvr.serve.{_HOME[name]}"), name)
