"""The connection guard: uvicorn's HTTP/1.1 protocol (h11) with the two defences it lacks
against slow or greedy clients, and JSON for the refusals it used to answer in plain text.

- A read timeout: a request must arrive whole (headers and body) within `read_timeout_s` of
  the connection opening or of the previous answer on it; otherwise the client gets a JSON 408
  and the connection is closed. Without it a client that never finishes its headers held a
  connection forever (a "slowloris"), and 1,100 of them made every normal request a 503.
  uvicorn's own keep-alive timeout still closes idle connections between requests.
- Connection caps: at most `max_connections_per_client` open connections from one address and
  `max_connections` in all. A connection over either cap is answered at once with a JSON 503
  and `Retry-After` after a one-second delay (reading and dropping what the client sends
  meanwhile, so that the client reads the answer instead of a connection reset), then closed.
  A refused connection counts toward neither cap.
- A request h11 cannot parse gets a JSON 400 instead of uvicorn's plain-text one.

This subclasses `uvicorn.protocols.http.h11_impl.H11Protocol`, so it depends on a few of its
attributes (`conn`, `cycle`, `transport`, `connections`, `client`); tests/serve/test_guard.py
checks each behaviour through real sockets, so a uvicorn change that breaks one shows there.
"""

from __future__ import annotations

import asyncio
from collections import Counter

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from rlvr.serve.completions import BadRequest
from rlvr.serve.limits import ServeLimits
from rlvr.serve.refusals import raw_response

LINGER_S = 1.0  # a refused connection is answered after this delay, then closed


def guarded_protocol(limits: ServeLimits) -> type[asyncio.Protocol]:
    """A protocol class for `uvicorn.Config(http=...)`, with its own per-address counts (one
    class per server, so two servers in one process do not share them)."""
    return type("GuardedH11Protocol", (_Guarded,), {"limits": limits, "per_client": Counter()})


class _Guarded(H11Protocol):
    limits: ServeLimits
    per_client: Counter

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.host = self.client[0] if self.client else "?"
        self.read_timer: asyncio.TimerHandle | None = None
        self.refused = False
        too_many = self._over_a_cap()
        if too_many:
            self._refuse(too_many)
            return
        self.per_client[self.host] += 1
        self._arm_read_timer()

    def _over_a_cap(self) -> str | None:
        if self.per_client[self.host] >= self.limits.max_connections_per_client:
            return (f"too many connections from {self.host}: at most "
                    f"{self.limits.max_connections_per_client} at once; retry later")
        if len(self.connections) > self.limits.max_connections:  # this one is already in the set
            return f"too many connections: at most {self.limits.max_connections} at once; retry later"
        return None

    def _refuse(self, message: str) -> None:
        """Answer after LINGER_S, then close: a client that reconnects as soon as it is answered
        (a flood from one address) then costs the server one accept a second per socket, not
        thousands (measured in benchmarks/serve_slow_clients.py)."""
        self.refused = True
        self.connections.discard(self)
        answer = raw_response(BadRequest(message, status=503, code="too_many_connections"))
        self.loop.call_later(LINGER_S, self._answer_and_close, answer)

    def _answer_and_close(self, answer: bytes) -> None:
        if not self.transport.is_closing():
            self.transport.write(answer)
            self.transport.close()  # after the write buffer drains

    def data_received(self, data: bytes) -> None:
        if self.refused:
            return  # dropped: this connection has had its answer
        super().data_received(data)
        if self.conn.their_state in (h11.DONE, h11.MUST_CLOSE):
            self._disarm_read_timer()  # the request is in: its time is the app's (request_timeout_s)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm_read_timer()  # the next request on this connection gets its own time

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_read_timer()
        if not self.refused:
            self.per_client[self.host] -= 1
            if self.per_client[self.host] <= 0:
                del self.per_client[self.host]
        super().connection_lost(exc)

    def send_400_response(self, msg: str) -> None:
        self.transport.write(raw_response(BadRequest(f"not a valid HTTP/1.1 request ({msg.rstrip('.')})",
                                                     code="bad_http")))
        self.transport.close()

    def _arm_read_timer(self) -> None:
        self._disarm_read_timer()
        self.read_timer = self.loop.call_later(self.limits.read_timeout_s, self._read_timed_out)

    def _disarm_read_timer(self) -> None:
        if self.read_timer is not None:
            self.read_timer.cancel()
            self.read_timer = None

    def _read_timed_out(self) -> None:
        self.read_timer = None
        if self.transport.is_closing() or self.conn.their_state in (h11.DONE, h11.MUST_CLOSE):
            return
        if self.cycle is not None and self.cycle.response_started:
            return  # an early answer (a 413) is on its way; the app closes this connection
        message = f"the request did not arrive whole within {self.limits.read_timeout_s:g} s"
        self.transport.write(raw_response(BadRequest(message, status=408, code="read_timeout")))
        self.transport.close()
