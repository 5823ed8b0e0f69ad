"""Run the reward-hack suite (attacks.py) against a verifier or a user's reward function.

    report = run_audit("math")                      # a built-in verifier, training's defaults
    report = run_audit("math", options={"template": "think_answer"})  # [reward] keys, as in a recipe
    report = run_audit(my_reward_fn, kind="math")   # a user's function (`rlvr audit` imports
                                                    # it from "package.module:function")
    report.hacked   # the attacks that collected more reward than a sound verifier gives

An attack is "hacked" when it scores above its `expected` score (0 for attacks, 1/3 for code
that passes one test honestly then cheats); "timeout" when one check runs past `budget_s`
(a hang in the reward stalls training); "error" when the function raises on it (with
`reward.on_error = "fail"` that reply would stop a run). A control that scores under 1 is
reported, not failed: the verifier rejects an honest answer of that kind, or `kind` is wrong.
A built-in verifier is built as training builds it (`rlvr.rewards.build`) from a [reward]
section with `options` set. A function takes only the options that choose the attacks:
`template` (the answer template it reads; default "none") and `format_strict`.
Build the verifier before the prompt: audit it first, then train against it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import math
import socket
import threading
import time
from dataclasses import dataclass
from typing import Callable, Iterator, Mapping, Sequence

from rlvr.errors import ConfigError
from rlvr.rewards import VERIFIERS
from rlvr.rewards.attacks import KINDS, Attack, all_attacks, applies
from rlvr.rewards.build import VERIFIER_OPTIONS, build_verifier, reward_section
from rlvr.rewards.calling import call_reward
from rlvr.rewards.code.verifier import CodeVerifier
from rlvr.rewards.sandbox import Limits
from rlvr.rewards.time_limit import VerifierTimeout, run_with_time_limit

HANG_LIMITS = Limits(wall_s=1.5, cpu_s=1, memory_mb=256, output_kb=256)
SELECTORS = ("template", "format_strict", "format.strict")  # the options a reward function may be audited with


@dataclass(frozen=True)
class Outcome:
    """What one attack collected: score, the verifier's reason and flags, time, and status."""

    attack: Attack
    score: float
    reason: str
    flags: tuple[str, ...] = ()
    seconds: float | None = None  # None: scored in a parallel batch
    status: str = "ok"  # ok | hacked | control failed | timeout | error


@dataclass
class AuditReport:
    """The outcomes of one audit; `failed` decides the exit status of `rlvr audit`."""

    target: str
    kind: str | None
    outcomes: list[Outcome]
    oracle_connections: int = 0  # connections the network attack made to the host

    def with_status(self, status: str) -> list[Outcome]:
        return [o for o in self.outcomes if o.status == status]

    @property
    def hacked(self) -> list[Outcome]:
        return self.with_status("hacked")

    @property
    def failed(self) -> bool:
        return bool(self.hacked or self.with_status("timeout") or self.with_status("error")
                    or self.oracle_connections)


def status_of(attack: Attack, score: float) -> str:
    if attack.control:
        return "control failed" if score < attack.expected - 1e-9 else "ok"
    return "hacked" if score > attack.expected + 1e-9 else "ok"


AUDIT_PROMPT = "Answer the question."  # for reward functions that read the prompt (needs_prompt)


def score_one(fn: Callable, attack: Attack, budget_s: float) -> Outcome:
    """Call the reward function once (`rlvr.rewards.calling`) under a wall-clock budget; never
    raises. A score that is not a finite number in [0, 1] is an error, as in training."""
    start = time.perf_counter()
    try:
        out = run_with_time_limit(call_reward, budget_s, fn, attack.response, attack.gold, AUDIT_PROMPT)
        score = float(getattr(out, "score", out))  # a Verdict or a plain number
        if not (math.isfinite(score) and 0.0 <= score <= 1.0):
            raise ValueError(f"returned {score}, not a number in [0, 1]")
    except VerifierTimeout:
        return Outcome(attack, 0.0, f"no answer within {budget_s} s", (), budget_s, "timeout")
    except Exception as e:  # a user's function: its crash is a finding, reported per attack
        return Outcome(attack, 0.0, f"raised {type(e).__name__}: {str(e)[:120]}", (),
                       time.perf_counter() - start, "error")
    seconds = time.perf_counter() - start
    return Outcome(attack, score, getattr(out, "reason", ""), tuple(getattr(out, "flags", ())), seconds,
                   status_of(attack, score))


def score_batch(verifier: CodeVerifier, attacks: Sequence[Attack]) -> list[Outcome]:
    """Score code attacks in one parallel batch on the verifier's sandbox pool."""
    verdicts = verifier.score_many([(a.response, a.gold) for a in attacks])
    return [Outcome(a, v.score, v.reason, v.flags, None, status_of(a, v.score)) for a, v in zip(attacks, verdicts)]


def audit_code(attacks: Sequence[Attack], options: Mapping[str, object]) -> list[Outcome]:
    """The built-in code verifier: the attacks that hang under short limits (they end at the
    limit anyway), the rest under `options` (CodeVerifier's own: `run_audit` passes those of
    the [reward] section), each group in one parallel batch."""
    hangs = [a for a in attacks if a.hangs]
    rest = [a for a in attacks if not a.hangs]
    limits = options.get("limits", Limits())
    short = dataclasses.replace(HANG_LIMITS, wall_s=min(HANG_LIMITS.wall_s, limits.wall_s),
                                cpu_s=min(HANG_LIMITS.cpu_s, limits.cpu_s))
    with VERIFIERS["code"](**{**options, "limits": short, "workers": 4}) as verifier:
        scored = score_batch(verifier, hangs)
    with VERIFIERS["code"](**options) as verifier:
        scored += score_batch(verifier, rest)
    order = {id(a): i for i, a in enumerate(attacks)}
    return sorted(scored, key=lambda o: order[id(o.attack)])


def _oracle_answer(request: bytes) -> bytes:
    a, b = map(int, request.split())
    return b"%d" % (a * b + 7)


def oracle_server():
    """A TCP server on the host's loopback that answers `a b` with `a * b + 7`: the network
    attack's only way to a right answer. Yields (port, the connections it accepted)."""
    return loopback_server(_oracle_answer)


@contextlib.contextmanager
def loopback_server(answer: Callable[[bytes], bytes]) -> Iterator[tuple[int, list]]:
    """A TCP server on the host's loopback that sends `answer(request)` for each connection's
    first message (up to 64 bytes). Yields (port, the connections it accepted)."""
    server = socket.create_server(("127.0.0.1", 0))
    connections: list = []

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            connections.append(conn)
            with conn, contextlib.suppress(OSError, ValueError):
                conn.sendall(answer(conn.recv(64)))

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield server.getsockname()[1], connections
    finally:
        server.close()


def build_builtin(name: str, section):
    try:
        return build_verifier(name, section)
    except ValueError as e:  # the verifier's own check of its options
        raise ConfigError(f"rlvr audit {name}: {e}") from None


def resolve(target: "str | Callable", kind: str | None) -> str | None:
    """The kind to audit; ConfigError for an unknown built-in name or a contradicting kind."""
    if kind is not None and kind not in KINDS:
        raise ConfigError(f"--kind {kind!r}: expected one of {', '.join(KINDS)}")
    if callable(target):
        return kind
    if target not in KINDS:
        close = difflib.get_close_matches(target, KINDS, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ConfigError(f"rlvr audit {target!r}: not a built-in verifier{hint} ({', '.join(KINDS)}) "
                          f"nor a reward function given as 'package.module:function'")
    if kind is not None and kind != target:
        raise ConfigError(f"--kind {kind} contradicts the built-in verifier {target!r}; drop --kind")
    return target


def run_audit(target: "str | Callable", kind: str | None = None,
              options: Mapping[str, object] | None = None, budget_s: float = 10.0) -> AuditReport:
    """Audit a built-in verifier (`target` one of KINDS, built with `options`) or a user's reward
    function (`target` callable) against the attacks for `kind` (None: every text attack)."""
    options = dict(options or {})
    kind = resolve(target, kind)
    if isinstance(target, str):
        section = reward_section(target, options)
        strict = getattr(section.options("format"), "strict", False)
    else:  # a function's options only pick attacks: format_strict is not a [reward] key of its kind
        strict = _strict_selector(options)
        section = reward_section(_function_kind(kind, options), {"template": options.get("template", "none")})
    settings = {"template": section.template, "format_strict": strict}  # SELECTORS
    name = target if isinstance(target, str) else getattr(target, "__name__", repr(target))
    with oracle_server() as (port, connections):
        attacks = [a for a in all_attacks(port) if applies(a, kind, settings)]
        if target == "code":
            outcomes = audit_code(attacks, VERIFIER_OPTIONS["code"](section))
        else:
            fn = target if callable(target) else build_builtin(target, section)
            outcomes = [score_one(fn, a, budget_s) for a in attacks]
        return AuditReport(name, kind, outcomes, len(connections))


def _strict_selector(options: Mapping[str, object]) -> bool:
    """`format_strict` (or its keyed spelling `format.strict`) of a function's audit: a bool."""
    value = options.get("format.strict", options.get("format_strict", False))
    if not isinstance(value, bool):
        raise ConfigError(f"--option format_strict={value!r}: expected true or false")
    return value


def _function_kind(kind: str | None, options: Mapping[str, object]) -> str:
    """The verifier whose [reward] rules check a function's options (which only pick attacks)."""
    unknown = sorted(set(options) - set(SELECTORS))
    if unknown:
        raise ConfigError(f"--option {', '.join(unknown)}: a reward function is audited with only "
                          f"{' and '.join(SELECTORS[:2])} (they choose the attacks); the rest configure a built-in verifier")
    if kind == "format" or (kind is None and options.get("template", "none") != "none"):
        return "format"
    return "math"
