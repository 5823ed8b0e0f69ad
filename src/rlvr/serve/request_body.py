"""Reading and decoding a request body without trusting it.

`read_capped` reads the whole body even when it is over the cap (counting, not keeping, the
excess) so that the 413 reaches a client that is still sending: answering early and closing
would reset its connection before it reads the answer (the old server's "broken pipe"). A body
over `DRAIN_FACTOR` times the cap is cut off with the connection closed instead.

`decode_json` turns every way a body can fail to be JSON into a `BadRequest` (400) with the
reason: bytes that are not UTF-8 (with the offset), a syntax error (with line and column),
nesting deeper than the parser's recursion limit (the standard library raises RecursionError,
after a few ms even for 200,000 levels), an integer literal over Python's 4,300-digit limit.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

from rlvr.serve.completions import BadRequest

DRAIN_FACTOR = 16


class BodyTooLarge(BadRequest):
    """A 413; `drained` is False when the rest of the body was left unread (close the connection)."""

    def __init__(self, message: str, drained: bool):
        super().__init__(message, status=413, code="body_too_large")
        self.drained = drained


async def read_capped(chunks: AsyncIterator[bytes], declared: str | None, limit: int) -> bytes:
    """The body from `chunks`; BodyTooLarge when it (or its Content-Length) is over `limit`."""
    if declared is not None and not declared.isdigit():
        raise BadRequest(f"the Content-Length header must be a number of bytes, got {declared[:40]!r}")
    if declared is not None and int(declared) > DRAIN_FACTOR * limit:
        raise BodyTooLarge(f"the body has {declared} bytes, over the limit of {limit}", drained=False)
    kept: list[bytes] = []
    size = 0
    async for chunk in chunks:
        size += len(chunk)
        if size <= limit:
            kept.append(chunk)
        elif size > DRAIN_FACTOR * limit:
            raise BodyTooLarge(f"the body has over {size} bytes, over the limit of {limit}", drained=False)
    if size > limit:
        raise BodyTooLarge(f"the body has {size} bytes, over the limit of {limit}", drained=True)
    return b"".join(kept)


def require_json(content_type: str | None) -> None:
    """A 415 unless the body is declared JSON (`application/json`, parameters allowed): a form
    or text/plain body that happens to parse as JSON is a client that means something else,
    and a browser page can send text/plain to a loopback server without a CORS preflight."""
    media = (content_type or "").split(";")[0].strip().lower()
    if media != "application/json":
        shown = repr(content_type[:60]) if content_type else "missing"
        raise BadRequest(f"the Content-Type must be application/json, got {shown}", status=415,
                         code="unsupported_media_type")


def decode_json(raw: bytes) -> object:
    """Parse a JSON body; BadRequest (400) naming why it is not acceptable JSON."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise BadRequest(f"the body is not UTF-8 (byte {e.start}: {raw[e.start:e.start + 1]!r})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise BadRequest(f"the body is not valid JSON ({e.msg} at line {e.lineno} column {e.colno})") from None
    except RecursionError:
        raise BadRequest("the body is not acceptable JSON: arrays/objects nest too deeply") from None
    except ValueError as e:  # e.g. an integer literal over sys.get_int_max_str_digits()
        raise BadRequest(f"the body is not acceptable JSON ({str(e)[:120]})") from None
