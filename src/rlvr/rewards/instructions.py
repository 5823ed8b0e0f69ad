"""Instruction following: IFEval-style constraints that a program can check exactly.

A constraint is data, `{"kind": "word_count", "relation": "at_least", "value": 50}`; its kind
names one small check in `CONSTRAINTS`, which returns `Verdict(1 or 0, reason)`. The
`InstructionVerifier` takes the gold as a JSON list of constraints (or an object with a
"constraints" list) and scores the fraction satisfied, or all-or-nothing when `strict`.
Zhou et al. 2023, "Instruction-Following Evaluation for Large Language Models" (IFEval),
which also defines the strict / loose split this mirrors at the prompt level.

Counting rules (stated, because each is a choice):
- a word is a run of letters or digits, with inner apostrophes or hyphens ("don't", "well-known");
- a sentence is a run of text that ends in `.`, `!` or `?` (or the end of the text) and holds a
  word; abbreviations such as "e.g." therefore count as sentence ends;
- a paragraph is a block separated from the next by a blank line;
- a bullet is a line starting with `-`, `*` or `•` then a space (numbered lines are not bullets);
- words, keywords and phrases match case-insensitively; words and keywords as whole words;
- `json_output` accepts the whole response as JSON, optionally inside one ``` fence;
- `lowercase` / `uppercase` need at least one letter and no letter of the other case.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable

from rlvr.errors import RewardError
from rlvr.rewards.verdict import Verdict

RELATIONS: dict[str, Callable[[int, int], bool]] = {
    "at_least": lambda n, value: n >= value,
    "at_most": lambda n, value: n <= value,
    "exactly": lambda n, value: n == value,
}
_RELATION_WORDS = {"at_least": "at least", "at_most": "at most", "exactly": "exactly"}
_WORD = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*")
_SENTENCE = re.compile(r"[^.!?]*(?:[.!?]+|$)")
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
_BULLET = re.compile(r"^[ \t]*[-*•][ \t]+\S", re.MULTILINE)
_FENCE = re.compile(r"^```[a-zA-Z]*\s*\n(.*)\n\s*```$", re.DOTALL)


def count_words(text: str) -> int:
    return len(_WORD.findall(text))


def count_sentences(text: str) -> int:
    return sum(1 for s in _SENTENCE.findall(text) if _WORD.search(s))


def count_paragraphs(text: str) -> int:
    return sum(1 for block in _PARAGRAPH_BREAK.split(text) if block.strip())


def count_bullets(text: str) -> int:
    return len(_BULLET.findall(text))


def count_keyword(text: str, keyword: str) -> int:
    return len(re.findall(rf"(?<![^\W_]){re.escape(keyword)}(?![^\W_])", text, re.IGNORECASE))


def _verdict(ok: bool, reason: str) -> Verdict:
    return Verdict(1.0 if ok else 0.0, reason)


def _counted(what: str, counter: Callable[[str], int]) -> Callable[..., Verdict]:
    def check(text: str, relation: str, value: int) -> Verdict:
        n = counter(text)
        return _verdict(RELATIONS[relation](n, value),
                        f"{n} {what}, need {_RELATION_WORDS[relation]} {value}")
    return check


def check_required_words(text: str, words: list[str]) -> Verdict:
    missing = [w for w in words if not count_keyword(text, w)]
    return _verdict(not missing, f"missing {missing}" if missing else "all required words present")


def check_forbidden_words(text: str, words: list[str]) -> Verdict:
    found = [w for w in words if count_keyword(text, w)]
    return _verdict(not found, f"uses forbidden {found}" if found else "no forbidden words")


def check_no_commas(text: str) -> Verdict:
    n = text.count(",")
    return _verdict(n == 0, f"{n} commas" if n else "no commas")


def check_json_output(text: str) -> Verdict:
    body = text.strip()
    fenced = _FENCE.match(body)
    try:
        json.loads(fenced.group(1) if fenced else body)
    except json.JSONDecodeError as e:
        return _verdict(False, f"not valid JSON ({e.msg} at line {e.lineno} col {e.colno})")
    return _verdict(True, "valid JSON")


def check_starts_with(text: str, phrase: str) -> Verdict:
    ok = text.strip().lower().startswith(phrase.strip().lower())
    return _verdict(ok, f"{'starts' if ok else 'does not start'} with {phrase!r}")


def check_ends_with(text: str, phrase: str) -> Verdict:
    ok = text.strip().lower().endswith(phrase.strip().lower())
    return _verdict(ok, f"{'ends' if ok else 'does not end'} with {phrase!r}")


def check_lowercase(text: str) -> Verdict:
    return _verdict(text.islower(), "all lowercase" if text.islower() else "not all lowercase")


def check_uppercase(text: str) -> Verdict:
    return _verdict(text.isupper(), "all uppercase" if text.isupper() else "not all uppercase")


def check_keyword_frequency(text: str, keyword: str, relation: str, value: int) -> Verdict:
    n = count_keyword(text, keyword)
    return _verdict(RELATIONS[relation](n, value),
                    f"{keyword!r} {n} times, need {_RELATION_WORDS[relation]} {value}")


_COUNT = {"relation": str, "value": int}
# kind -> (check, the parameters it takes and their types)
CONSTRAINTS: dict[str, tuple[Callable[..., Verdict], dict[str, type]]] = {
    "word_count": (_counted("words", count_words), _COUNT),
    "sentence_count": (_counted("sentences", count_sentences), _COUNT),
    "paragraph_count": (_counted("paragraphs", count_paragraphs), _COUNT),
    "bullet_count": (_counted("bullets", count_bullets), _COUNT),
    "required_words": (check_required_words, {"words": list}),
    "forbidden_words": (check_forbidden_words, {"words": list}),
    "no_commas": (check_no_commas, {}),
    "json_output": (check_json_output, {}),
    "starts_with": (check_starts_with, {"phrase": str}),
    "ends_with": (check_ends_with, {"phrase": str}),
    "lowercase": (check_lowercase, {}),
    "uppercase": (check_uppercase, {}),
    "keyword_frequency": (check_keyword_frequency, {"keyword": str, **_COUNT}),
}


@dataclass(frozen=True)
class Constraint:
    """One validated constraint: its kind and its parameters (as a sorted tuple, so hashable)."""

    kind: str
    params: tuple[tuple[str, Any], ...]

    def __call__(self, text: str) -> Verdict:
        check, _ = CONSTRAINTS[self.kind]
        return check(text, **{k: list(v) if isinstance(v, tuple) else v for k, v in self.params})

    def __str__(self) -> str:
        args = ", ".join(f"{k}={list(v) if isinstance(v, tuple) else v!r}" for k, v in self.params)
        return f"{self.kind}({args})"


def _param_problem(kind: str, spec: dict) -> str | None:
    expected = CONSTRAINTS[kind][1]
    given = {k for k in spec if k != "kind"}
    if given != set(expected):
        return (f"{kind} takes {sorted(expected) or 'no parameters'}, got {sorted(given) or 'none'}")
    for name, typ in expected.items():
        value = spec[name]
        if typ is int and (type(value) is not int or value < 0):
            return f"{name} must be a non-negative integer, got {value!r}"
        if typ is not int and not isinstance(value, typ):
            return f"{name} must be a {typ.__name__}, got {value!r}"
        if typ is str and not value.strip():
            return f"{name} must not be empty"
        if typ is list and (not value or not all(isinstance(w, str) and w.strip() for w in value)):
            return f"{name} must be a non-empty list of non-empty strings, got {value!r}"
    if "relation" in expected and spec["relation"] not in RELATIONS:
        return f"relation must be one of {sorted(RELATIONS)}, got {spec['relation']!r}"
    return None


def parse_constraint(spec: Any, where: str = "constraint") -> Constraint:
    """A `Constraint` from its data form; RewardError naming `where` and the spec if malformed."""
    if not isinstance(spec, dict) or not isinstance(spec.get("kind"), str):
        raise RewardError(f"{where} {spec!r}: expected an object with a string 'kind'")
    kind = spec["kind"]
    if kind not in CONSTRAINTS:
        close = difflib.get_close_matches(kind, CONSTRAINTS, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else f"; known kinds: {sorted(CONSTRAINTS)}"
        raise RewardError(f"{where} {spec!r}: unknown kind {kind!r}{hint}")
    problem = _param_problem(kind, spec)
    if problem:
        raise RewardError(f"{where} {spec!r}: {problem}")
    params = tuple(sorted((k, tuple(v) if isinstance(v, list) else v)
                          for k, v in spec.items() if k != "kind"))
    return Constraint(kind, params)


@lru_cache(maxsize=4096)
def parse_constraints(gold: str) -> tuple[Constraint, ...]:
    """The constraints of a gold string: a JSON list, or an object with a "constraints" list."""
    try:
        data = json.loads(gold)
    except json.JSONDecodeError as e:
        raise RewardError(f"instruction gold is not valid JSON ({e.msg}): {gold[:80]!r}") from None
    if isinstance(data, dict):
        data = data.get("constraints")
    if not isinstance(data, list) or not data:
        raise RewardError(f"instruction gold must be a non-empty list of constraints (or an object "
                          f"with one under 'constraints'), got {gold[:80]!r}")
    return tuple(parse_constraint(spec, f"constraint {i}") for i, spec in enumerate(data))


@dataclass(frozen=True)
class InstructionVerifier:
    """Score the fraction of the gold's constraints that the response satisfies.

        verifier = InstructionVerifier()
        verifier(response="hello world", gold='[{"kind": "lowercase"}, {"kind": "word_count", '
                                               '"relation": "at_least", "value": 3}]')
        # Verdict(score=0.5, reason='1/2 constraints met; failed: word_count(...): 2 words, ...')

    Attributes:
        strict: score 1 only when every constraint holds, else 0 (IFEval's prompt-level strict).
        max_chars: longer responses score 0 without being read (flag "too_long").
    """

    strict: bool = False
    max_chars: int = 100_000

    def __post_init__(self) -> None:
        if not self.max_chars > 0:
            raise ValueError(f"max_chars must be positive, got {self.max_chars!r}")

    def __call__(self, *, response: str, gold: "str | list | dict") -> Verdict:
        """Check `response` against the constraints in `gold` (JSON text, a list or a dict)."""
        constraints = parse_constraints(gold if isinstance(gold, str) else json.dumps(gold))
        if len(response) > self.max_chars:
            return Verdict(0.0, f"response too long ({len(response)} chars)", ("too_long",))
        failed = [(c, v) for c in constraints if (v := c(response)).score < 1.0]
        met = len(constraints) - len(failed)
        score = float(not failed) if self.strict else met / len(constraints)
        reason = f"{met}/{len(constraints)} constraints met"
        if failed:
            reason += "; failed: " + "; ".join(f"{c}: {v.reason}" for c, v in failed)
        return Verdict(score, reason)
