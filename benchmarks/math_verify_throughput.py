"""Maths checks per second: rlvr's MathVerifier against math-verify called directly.

    python benchmarks/math_verify_throughput.py [--n 200] [--seed 0] [--out FILE] [--sets a,b]

Four input sets, the same inputs for every mode, in the same run:

- plain:     integer answers (`\\boxed{N}` or "The answer is N."), half of them right;
- mix:       a realistic mix of final answers (boxed and prose integers, LaTeX fractions
             and expressions, intervals, equations, mixed numbers, thousands, currency,
             percentages, choice letters, and 10% forms with no exact fast path, such as
             `\\frac{3\\pi}{4}`, that rlvr also hands to math-verify) with about 2%
             pathological inputs: a power tower, a million-digit power, a huge factorial,
             and a long rambling reply;
- responses: the mix's answers inside whole model responses (a few sentences of working
             with numbers and `$...$` maths, then the answer: 80% boxed, 10% "The answer
             is", 10% a final `$...$`), the same pathological inputs;
- responses-ordinary: the same without the pathological inputs (which cost bare math-verify
             its 5 s time-outs and so inflate the ratio);
- answers:   the mix's answers alone, as a model would give them with no working and no box
             (`\\frac{3}{4}`, `[1, 5)`, `x = 3`), the case rlvr must extract whole;
- labelled-responses: not generated: every row of the labelled pair files
             (tests/rewards/data/math_pairs*.jsonl) whose response is a whole reply (80+
             characters; 73% boxed) outside the huge_expressions category, with its label:
             written responses in every answer form, many of which need sympy (--n is ignored).

Modes:

- bare:        `math_verify.verify(math_verify.parse(gold), math_verify.parse(response))` per
               call, gold parsed every call as a naive user would (math-verify's own 5 s
               timeouts on);
- bare-cached: the same with each distinct gold parsed once;
- rlvr:        `MathVerifier()(response=response, gold=gold)` (its gold cache cleared before the run).

Each mode also reports its accuracy against the labels, so a speed-up cannot hide a loss of
accuracy. One process, one core.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import random
import time
from importlib.metadata import version
from pathlib import Path

import math_verify

from rlvr.rewards import MathVerifier
from rlvr.rewards.math import normalize as math_normalize
from rlvr.rewards.math.verifier import _parse_gold, gold_answer

PATHOLOGICAL = [
    ("so \\boxed{9^{9^{9}}}", "1", 0),
    ("\\boxed{10^{1000000}}", "1", 0),
    ("the count is \\boxed{12345!}", "2", 0),
]


def plain_cases(n: int, rng: random.Random) -> list[tuple[str, str, int]]:
    """(response, gold, label) with integer answers, half right."""
    cases = []
    for i in range(n):
        gold = rng.randint(-1000, 100000)
        answer = gold if i % 2 else gold + rng.randint(1, 9)
        template = "Adding up, we get \\boxed{%d}." if i % 3 else "So the answer is %d."
        cases.append((template % answer, str(gold), int(answer == gold)))
    return cases


def _ordinary(rng: random.Random) -> tuple[str, str, int]:
    """One realistic non-pathological case."""
    a, b = rng.randint(1, 99), rng.randint(2, 99)
    kind = rng.choices(range(11), weights=[30, 15, 10, 10, 5, 5, 8, 5, 7, 5, 10])[0]
    ok = rng.random() < 0.6
    if kind == 0:
        return f"Step 1... Step 2... \\boxed{{{a if ok else a + 1}}}", str(a), int(ok)
    if kind == 1:
        return f"First {b} and {a}. The answer is {a if ok else b}.", str(a), int(ok or a == b)
    if kind == 2:
        num, den = (a, b) if ok else (a + 1, b)
        response = f"\\boxed{{\\frac{{{2 * num}}}{{{2 * den}}}}}"
        return response, f"\\frac{{{a}}}{{{b}}}", int(ok or num * b == a * den)
    if kind == 3:
        return f"\\boxed{{(x+{a})^2}}", f"x^2+{2 * a if ok else a}x+{a * a}", int(ok)
    if kind == 4:
        return f"\\boxed{{[{a}, {a + b})}}", f"[{a},{a + b})" if ok else f"({a},{a + b}]", int(ok)
    if kind == 5:
        return f"\\boxed{{x = {a}}}", str(a if ok else a + 1), int(ok)
    if kind == 6:
        digit = a % 9 + 1
        forms = [
            (f"\\boxed{{{a} 1/2}}", f"{2 * a + 1}/2"),
            (f"\\boxed{{{a},{b:03d}}}", str(a * 1000 + b)),
            (f"It costs \\${a}.00 in total.", str(a)),
            (f"\\boxed{{0.\\overline{{{digit}}}}}", f"{digit}/9"),
        ]
        response, gold = rng.choice(forms)
        return (response, gold, 1) if ok else (response, f"{gold}1", 0)
    if kind == 7:
        return f"\\boxed{{{a}\\%}}", f"{a if ok else a + 1}\\%", int(ok)
    if kind == 8:
        letter = rng.choice("ABCD")
        return f"The answer is ({letter}).", letter if ok else "E", int(ok)
    if kind == 9:
        return f"\\boxed{{\\sqrt{{{a * a * 3}}}}}", f"{a if ok else a + 1}\\sqrt{{3}}", int(ok)
    # no exact fast path: these go to math-verify (sympy) in rlvr too
    if rng.random() < 0.5:
        gold = f"\\frac{{{a if ok else a + b}\\pi}}{{{b}}}"
        return f"\\boxed{{\\frac{{{a}\\pi}}{{{b}}}}}", gold, int(ok)
    return f"\\boxed{{\\frac{{x}}{{{b}}}}}", f"\\frac{{1}}{{{b if ok else b + 1}}}x", int(ok)


def mix_cases(n: int, rng: random.Random) -> list[tuple[str, str, int]]:
    """(response, gold, label): ordinary cases plus ~2% pathological ones, shuffled."""
    long_reply = " ".join(f"step {i}: {rng.randint(0, 999)} + x" for i in range(900))
    bad = PATHOLOGICAL + [(long_reply + " so \\boxed{42}", "42", 1)]
    cases = [_ordinary(rng) for _ in range(n - len(bad))] + bad
    rng.shuffle(cases)
    return cases


_WORKING = [
    "Let $a = {a}$ and $b = {b}$. Then $a + b = {s}$ and $a \\cdot b = {p}$.",
    "We substitute $x = {a}$ into $f(x) = x^2 - {b}x$, which gives $f({a}) = {q}$.",
    "Checking the case $n = {b}$: the sum $1 + 2 + \\dots + {b} = {t}$, as expected.",
    "Since {a} and {b} are both positive, the product {p} is positive too.",
    "Dividing both sides by {b} leaves $\\frac{{{p}}}{{{b}}} = {a}$.",
]


def _working(rng: random.Random) -> str:
    """A few sentences of plausible working, with numbers and inline maths."""
    a, b = rng.randint(2, 60), rng.randint(2, 60)
    values = {"a": a, "b": b, "s": a + b, "p": a * b, "q": a * a - b * a, "t": b * (b + 1) // 2}
    lines = [line.format(**values) for line in rng.sample(_WORKING, 3)]
    return "To solve this, we work step by step.\n\n" + "\n\n".join(lines) + "\n\n"


def _final_answer(response: str) -> str:
    """The answer a mix case states: its last box's content, or the response itself."""
    if "\\boxed{" not in response:
        return response
    start = response.rindex("\\boxed{") + len("\\boxed{")
    depth, i = 1, start
    while depth:
        depth += {"{": 1, "}": -1}.get(response[i], 0)
        i += 1
    return response[start : i - 1]


def _as_responses(cases, rng: random.Random) -> list[tuple[str, str, int]]:
    """Each answer after a few sentences of working: 80% boxed, 10% phrase, 10% final `$...$`."""
    wrapped = []
    for response, gold, label in cases:
        if len(response) > 2000:
            wrapped.append((response, gold, label))  # the long rambling reply as it is
            continue
        answer, style = _final_answer(response), rng.random()
        if answer == response:
            ending = response  # a prose answer ("The answer is (B).") ends the working as it is
        elif style < 0.8:
            ending = f"Therefore the final answer is $\\boxed{{{answer}}}$."
        elif style < 0.9:
            ending = f"The answer is ${answer}$."
        else:
            ending = f"So we obtain ${answer}$."
        wrapped.append((_working(rng) + ending, gold, label))
    return wrapped


def response_cases(n: int, rng: random.Random) -> list[tuple[str, str, int]]:
    """The mix's answers, pathological ones included, inside whole responses."""
    return _as_responses(mix_cases(n, rng), rng)


def ordinary_response_cases(n: int, rng: random.Random) -> list[tuple[str, str, int]]:
    """`response_cases` without the pathological inputs: the ratio they do not inflate."""
    ordinary = [c for c in mix_cases(n, rng) if c not in PATHOLOGICAL and len(c[0]) < 2000]
    return _as_responses(ordinary, rng)


def answer_cases(n: int, rng: random.Random) -> list[tuple[str, str, int]]:
    """The mix's answers alone, unboxed: what a reply that is only its answer looks like.

    The mix's prose answers ("The answer is (B).") stay as they are.
    """
    return [(_final_answer(response), gold, label) for response, gold, label in mix_cases(n, rng)]


DATA = Path(__file__).resolve().parents[1] / "tests" / "rewards" / "data"


def labelled_response_cases(n: int, rng: random.Random) -> list[tuple[str, str, int]]:
    """Whole replies from the labelled pair files (see the module docstring); n, rng unused."""
    cases = []
    for path in sorted(DATA.glob("math_pairs*.jsonl")):
        for line in path.read_text().splitlines():
            row = json.loads(line) if line.strip() else None
            if row and len(row["response"]) >= 80 and row["category"] != "huge_expressions":
                cases.append((row["response"], row["gold"], int(row["label"])))
    return cases


def bare(cases, cache_gold: bool) -> list[int]:
    """math-verify used directly; an exception counts as a 0, as it would for a user."""
    golds: dict[str, list] = {}
    scores = []
    for response, gold, _ in cases:
        try:
            if cache_gold:
                parsed = golds.setdefault(gold, math_verify.parse(gold))
            else:
                parsed = math_verify.parse(gold)
            scores.append(int(bool(math_verify.verify(parsed, math_verify.parse(response)))))
        except Exception:  # deliberate: the baseline's crash is its wrong answer
            scores.append(0)
    return scores


def _clear_rlvr_caches() -> None:
    """Start every set cold: the gold caches, and the string caches of `math_normalize`
    (where a version has them), which would otherwise keep the answers of an earlier set
    (the "answers" set repeats the "mix" answers)."""
    _parse_gold.cache_clear()
    gold_answer.cache_clear()
    for name in ("clean", "to_fraction", "_top_level_items"):
        cached = getattr(math_normalize, name, None)
        if hasattr(cached, "cache_clear"):
            cached.cache_clear()


def rlvr(cases) -> list[int]:
    _clear_rlvr_caches()
    verifier = MathVerifier()
    return [int(verifier(response=response, gold=gold).score) for response, gold, _ in cases]


MODES = {
    "bare": lambda cases: bare(cases, cache_gold=False),
    "bare-cached": lambda cases: bare(cases, cache_gold=True),
    "rlvr": rlvr,
}


def measure(cases) -> dict[str, dict[str, float]]:
    """checks/s and accuracy per mode, plus rlvr's speed ratio to each bare mode."""
    results = {}
    for name, mode in MODES.items():
        start = time.perf_counter()
        scores = mode(cases)
        seconds = time.perf_counter() - start
        right = sum(score == label for score, (_, _, label) in zip(scores, cases))
        results[name] = {"checks_per_s": len(cases) / seconds, "accuracy": right / len(cases)}
    for name in ("bare", "bare-cached"):
        ratio = results["rlvr"]["checks_per_s"] / results[name]["checks_per_s"]
        results["rlvr"][f"x_{name}"] = ratio
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200, help="cases per input set")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", help="also write the results as JSON here")
    parser.add_argument("--sets", help="comma-separated input sets to run (default: all)")
    args = parser.parse_args()
    logging.disable(logging.WARNING)  # math-verify warns on every call with timeouts off
    report = {"python": platform.python_version(), "math_verify": version("math-verify"),
              "load_before": os.getloadavg()}
    sets = (
        ("plain", plain_cases),
        ("mix", mix_cases),
        ("responses", response_cases),
        ("responses-ordinary", ordinary_response_cases),
        ("answers", answer_cases),
        ("labelled-responses", labelled_response_cases),
    )
    wanted = args.sets.split(",") if args.sets else [name for name, _ in sets]
    unknown = set(wanted) - {name for name, _ in sets}
    if unknown:
        parser.error(f"unknown set(s) {sorted(unknown)}; valid: {[name for name, _ in sets]}")
    for set_name, make in (item for item in sets if item[0] in wanted):
        report[set_name] = measure(make(args.n, random.Random(args.seed)))
        for mode, row in report[set_name].items():
            extra = "".join(f"  {k}={v:.1f}" for k, v in row.items() if k.startswith("x_"))
            print(f"{set_name:18s} {mode:12s} {row['checks_per_s']:9.1f} checks/s  "
                  f"accuracy {row['accuracy']:.3f}{extra}", flush=True)
    report["load_after"] = os.getloadavg()
    print(f"load average (1, 5, 15 min): before {report['load_before']}, after {report['load_after']}")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(report, f, indent=2)


if __name__ == "__main__":
    main()
