"""`rlvr serve`: a local OpenAI-compatible completions server for one model folder.

`completions.py` checks requests, `model_service.py` answers them with the in-process engine,
`http_server.py` is the HTTP layer. It exists so that the HTTP judge backend
(rewards/judge/http_backend.py) can be used, and tested, against a real server.
"""

from rlvr.serve.completions import BadRequest, CompletionRequest, parse_request
from rlvr.serve.http_server import CompletionServer
from rlvr.serve.model_service import ModelService

__all__ = ["BadRequest", "CompletionRequest", "CompletionServer", "ModelService", "parse_request"]
