"""The code verifier's harness: the modes that run model code against tests, inside the sandbox.

Stdlib only, no `from __future__`: `sandbox/program.py` ships this source, joined after
`sandbox/inside.py` and `code/codec.py` (the value format both sides share), into the sandbox
(its modes receive inside.py's `Job`).

Why the candidate cannot forge a verdict: nothing the candidate's process says is a verdict.

- mode "call" (function-call cases): the candidate process reports the *values* its function
  returned, encoded as plain data; the parent decodes them strictly (only None, bool, int,
  float, complex, str, bytes, list, tuple, dict, set, frozenset; exact types, so a subclass
  with an always-true `__eq__` cannot even be encoded) and compares them with the expected
  values, which never enter the sandbox. A forged record is no more than a returned value.
- mode "check" (assert-style `check(candidate)`): the tests run in a separate *checker*
  process, forked before any model code runs and the only one holding the tests (fd 5) and
  the results pipe (fd 4). The candidate process runs the model code and answers calls over a
  socket with encoded values; the checker decodes them to plain data, so the tests' asserts
  compare real values. Patching builtins, `sys.exit`, `SkipTest`, fake output or threads in
  the candidate process cannot reach the checker; killing it only loses tests, which then
  count as failed.
"""

import builtins
import os
import struct

if __name__ != "__main__":  # imported by rlvr; inside the sandbox program codec.py is joined in first
    from rlvr.rewards.code.codec import decode_value, encode_value

# json, select and socket are imported where used (and `serve` pre-imports them in warm mode):
# a fresh sandbox that runs a plain program should not pay for them.

MAX_MESSAGE = 1 << 22


class CandidateFailed(BaseException):
    """The candidate did not answer a call: it died, hung, or answered out of turn.

    A BaseException so that a test's own `except Exception:` cannot turn a dead candidate into
    a pass.
    """


class CandidateNotLoaded(CandidateFailed):
    """The candidate's program failed before it could answer (syntax error, exit at import...)."""


class CandidateError(Exception):
    """The candidate raised an exception that is not a builtin one (named in the message)."""


def send_message(fd: int, message: dict) -> None:
    """Write one length-prefixed JSON message (4-byte big-endian length, then the JSON)."""
    import json

    data = json.dumps(message).encode()
    data = struct.pack(">I", len(data)) + data
    while data:
        data = data[os.write(fd, data) :]


def _read_exactly(fd: int, size: int) -> bytes:
    chunks, left = [], size
    while left:
        chunk = os.read(fd, min(left, 1 << 16))
        if not chunk:
            raise CandidateFailed("the candidate process closed the connection")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def receive_message(fd: int) -> dict:
    """Read one message written by `send_message`; CandidateFailed on EOF or a bad frame."""
    (size,) = struct.unpack(">I", _read_exactly(fd, 4))
    if size > MAX_MESSAGE:
        raise CandidateFailed(f"message of {size} bytes is over the {MAX_MESSAGE} byte limit")
    import json

    try:
        message = json.loads(_read_exactly(fd, size))
    except (ValueError, RecursionError) as error:
        raise CandidateFailed(f"unreadable message: {type(error).__name__}") from None
    if type(message) is not dict:
        raise CandidateFailed("message is not an object")
    return message


def write_record(record: dict) -> None:
    """One JSON line on the results pipe (fd 4); a line this short is written atomically."""
    import json

    os.write(4, (json.dumps(record) + "\n").encode())


def describe(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"[:300]


# --- mode "call": function-call cases, values compared by the parent --------------------------


def call_cases(job) -> int:
    """Candidate role: load the program, call the entry point on each case, report values."""
    header = job.header
    namespace, error = job.load_module(header["code"], "candidate")
    if error is not None:
        write_record({"load_error": describe(error)})
        return 1
    function = namespace.get(header["entry_point"])
    for index, case in enumerate(header["cases"]):
        try:
            if not callable(function):
                raise NameError(f"{header['entry_point']!r} is not defined as a function")
            args, kwargs = decode_value(case["args"]), decode_value(case["kwargs"])
            record = {"case": index, "value": encode_value(function(*args, **kwargs))}
        except BaseException as raised:  # SystemExit and SkipTest included: the case fails
            record = {"case": index, "error": describe(raised)}
        write_record(record)
    return 0


def mode_call(job) -> int:
    import json  # noqa: F401  (before the fork, so that the candidate's time is its own)

    pid = job.spawn("candidate", lambda: call_cases(job), keep=(4,))
    return job.wait(pid)


# --- mode "check": assert-style tests in a separate checker process ---------------------------


class Channel:
    """The checker's end of the socket to the candidate: one request, then its reply.

    After one failed exchange (the candidate died, hung past `timeout_s`, or answered out of
    turn) `broken` says why and every later request fails at once: a test during which the
    channel broke never counts as passed, whatever the test code did with the exception.
    """

    def __init__(self, fd: int, timeout_s: float):
        self.fd, self.timeout_s = fd, timeout_s
        self.seq, self.broken = 0, None

    def ask(self, request: dict) -> dict:
        if self.broken:
            raise CandidateFailed(self.broken)
        self.seq += 1
        try:
            send_message(self.fd, {**request, "seq": self.seq})
            reply = self._reply()
        except OSError as error:  # the candidate's end is gone
            self.broken = f"the candidate process is gone ({type(error).__name__})"
            raise CandidateFailed(self.broken) from None
        except CandidateFailed as error:
            self.broken = str(error)
            raise
        if reply.get("raised") == "CandidateNotLoaded":
            self.broken = str(reply.get("message", ""))[:300]
            raise CandidateNotLoaded(self.broken)
        return reply

    def _reply(self) -> dict:
        import select

        ready, _, _ = select.select([self.fd], [], [], self.timeout_s)
        if not ready:
            raise CandidateFailed(f"no answer within {self.timeout_s} s")
        reply = receive_message(self.fd)
        if reply.get("seq") != self.seq:
            raise CandidateFailed("answer out of turn")
        return reply


class CandidateProxy:
    """Stands in for one candidate function inside the checker: forwards each call, by value.

    Returns decoded plain data; re-raises the candidate's exception as the builtin exception
    of the same name when there is one (so that tests expecting `ValueError` still work),
    else as `CandidateError`. With no channel (collection, where no candidate runs) a call
    fails with CandidateFailed.
    """

    def __init__(self, channel, name: str):
        self.channel, self.__name__ = channel, name

    def __call__(self, *args, **kwargs):
        if self.channel is None:
            raise CandidateFailed("no candidate runs while the tests are collected")
        reply = self.channel.ask(
            {
                "op": "call",
                "name": self.__name__,
                "args": encode_value(list(args)),
                "kwargs": encode_value(kwargs),
            }
        )
        if "raised" in reply:
            raise _rebuild_exception(str(reply["raised"]), str(reply.get("message", "")))
        return decode_value(reply.get("value"))

    def __repr__(self) -> str:
        return f"<candidate function {self.__name__}>"


def _rebuild_exception(name: str, message: str) -> Exception:
    kind = getattr(builtins, name, None)
    if isinstance(kind, type) and issubclass(kind, Exception):
        return kind(message)
    return CandidateError(f"{name}: {message}"[:300])


def run_one_test(source: str, helpers: str, entry: str, proxy) -> tuple:
    """Checker: run one test's `check(candidate)` in a fresh namespace; (passed, detail, ran).

    `ran` is False when the candidate could not answer at all (it failed to load, died or
    hung): the monitors count such runs apart from plain wrong answers.
    """
    namespace = {"__name__": "__rlvr_check__", "__builtins__": builtins}
    try:
        exec(helpers, namespace)
        namespace[entry] = proxy
        exec(source, namespace)
        check = namespace.get("check")
        if not callable(check):
            return False, "the test defines no check() function", True
        check(proxy)
    except CandidateFailed as error:
        return False, describe(error), False
    except BaseException as error:  # any way out but a normal return is a failed test
        return _unless_broken(proxy.channel, False, describe(error))
    return _unless_broken(proxy.channel, True, "passed")


def _unless_broken(channel, passed: bool, detail: str) -> tuple:
    """(passed, detail, ran), except that a test during which the candidate stopped answering
    never passed, even if the test code caught the CandidateFailed it raised."""
    if channel is not None and channel.broken:
        return False, f"the candidate stopped answering: {channel.broken}"[:300], False
    return passed, detail, True


def read_secret() -> dict:
    """Checker role: the tests, from fd 5 (which only the checker holds)."""
    import json

    chunks = []
    while chunk := os.read(5, 1 << 16):
        chunks.append(chunk)
    os.close(5)
    return json.loads(b"".join(chunks))


def run_checks(job, fd: int) -> int:
    """Checker role: read the tests from fd 5, run each, one record per test on fd 4."""
    secret = read_secret()
    header = job.header
    proxy = CandidateProxy(Channel(fd, header["call_timeout_s"]), header["entry_point"])
    for index, source in enumerate(secret["tests"]):
        passed, detail, ran = run_one_test(source, secret["helpers"], header["entry_point"], proxy)
        write_record({"test": index, "passed": passed, "detail": detail, "ran": ran})
    return 0


def serve_calls(job, fd: int) -> int:
    """Candidate role: load the program, then answer the checker's requests until it hangs up.

    Requests: {"op": "call", "name", "args", "kwargs"} calls a top-level function of the
    program; {"op": "get", "name"} says whether a top-level name is a function (the checker
    then makes a proxy for it) or gives its value as plain data ("__all__": the public names).
    """
    namespace, error = job.load_module(job.header["code"], job.header.get("module", "candidate"))
    while True:
        try:
            request = receive_message(fd)
        except CandidateFailed:
            return 0
        reply = {"seq": request.get("seq")}
        try:
            if error is not None:
                raise CandidateNotLoaded(f"the program failed to load: {describe(error)}")
            reply.update(answer_request(namespace, request))
        except BaseException as raised:  # SystemExit, SkipTest, ...: the checker sees a raise
            reply.update(raised=type(raised).__name__, message=str(raised)[:300])
        send_message(fd, reply)


def _exported(value) -> bool:
    """Does `from solution import *` (without `__all__`) bring this value across: a function
    (as a proxy) or plain data? Modules and other objects stay behind."""
    if callable(value):
        return True
    try:
        encode_value(value)
    except (TypeError, RecursionError):
        return False
    return True


def answer_request(namespace: dict, request: dict) -> dict:
    """Candidate role: the reply to one call or name look-up (may raise: a raise is a reply)."""
    name = request.get("name")
    if type(name) is not str or not name.isidentifier():
        raise NameError("the checker asked for a name that is not an identifier")
    if request.get("op") == "get" and name == "__all__":
        names = namespace.get("__all__")
        if type(names) not in (list, tuple) or any(type(n) is not str for n in names):
            names = [n for n, v in namespace.items() if n[0] != "_" and _exported(v)]
        return {"value": encode_value(list(names))}
    if name not in namespace:
        raise NameError(f"{name!r} is not defined")
    value = namespace[name]
    if request.get("op") == "get":
        return {"callable": True} if callable(value) else {"value": encode_value(value)}
    if not callable(value):
        raise NameError(f"{name!r} is not defined as a function")
    args, kwargs = decode_value(request["args"]), decode_value(request["kwargs"])
    return {"value": encode_value(value(*args, **kwargs))}


def start_checked(job, checker) -> int:
    """Fork the checker first (it alone keeps fds 4 and 5), then the candidate.

    The job ends when the checker does; the namespace's teardown then kills the candidate.
    """
    import json  # noqa: F401  (once, before the forks, rather than in each role)
    import socket

    checker_fd, candidate_fd = (end.detach() for end in socket.socketpair())
    pid = job.spawn("checker", lambda: checker(job, checker_fd), keep=(4, 5, checker_fd))
    for fd in (4, 5, checker_fd):
        os.close(fd)
    job.spawn("candidate", lambda: serve_calls(job, candidate_fd), keep=(candidate_fd,))
    os.close(candidate_fd)
    return job.wait(pid)


def mode_check(job) -> int:
    """Assert-style tests: `run_checks` in the checker, the program in the candidate."""
    return start_checked(job, run_checks)


HARNESS_MODES = {"call": mode_call, "check": mode_check}
