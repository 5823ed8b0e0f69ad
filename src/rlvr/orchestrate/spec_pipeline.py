"""The deliberative-alignment pipeline (Guan et al. 2024), each stage a command that writes
files into one folder and resumes from what is there:

    1. generate  a teacher with the spec in context answers prompts: reasoning that cites rule
                 ids, then the answer                                   -> generated.jsonl
    2. filter    the spec judge (rlvr.spec.judge) keeps the completions that follow the rule
                 governing their request and cite it; rejection reasons -> sft.jsonl, filter.json
                 sft.jsonl's prompts carry no spec: the student learns to recall it
    3. sft       `rlvr sft` on sft.jsonl
    4. rl        `rlvr train` (GRPO) with `reward.function = "rlvr.spec.judge:reward"` on
                 rl_train.jsonl, whose gold is each request's governing rule (`rl-data`)

Every row is drawn from `random.Random(f"{seed}:{i}")`, so a stage stopped after k rows and
run again writes rows k, k+1, ... exactly as one uninterrupted run would.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

from rlvr.errors import DatasetError
from rlvr.spec.document import Spec
from rlvr.spec.domain import Request, answer_for, reasoning_for, requests
from rlvr.spec.judge import gold_for, judge

GENERATED, SFT_ROWS, FILTER_REPORT = "generated.jsonl", "sft.jsonl", "filter.json"


def student_prompt(req: Request) -> str:
    """What the student sees: the request alone, never the spec."""
    return f"{req.prompt}\n"


def teacher_prompt(spec: Spec, req: Request) -> str:
    return f"{spec.as_text()}\n\n{req.prompt}\n"


def scripted_teacher(spec: Spec, noise: float):
    """A teacher that reads the spec's rules and follows the governing one, except that with
    probability `noise` it applies another rule (a wrong citation and often a wrong answer):
    it stands in for a model with the spec in context, mistakes included, on a machine with
    no model able to read one."""
    def answer(req: Request, rng: random.Random) -> str:
        rule = spec.governing(req.category)
        if rng.random() < noise:
            rule = rng.choice([r for r in spec.rules if r is not rule] or [rule])
        return reasoning_for(rule) + answer_for(rule, req)
    return answer


def model_teacher(spec: Spec, model_dir: str, max_new_tokens: int = 48):
    """A causal LM given the spec and the request; one sample per row, seeded by the row."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok, model = AutoTokenizer.from_pretrained(model_dir), AutoModelForCausalLM.from_pretrained(model_dir)

    def answer(req: Request, rng: random.Random) -> str:
        torch.manual_seed(rng.randrange(2**31))
        ids = tok(teacher_prompt(spec, req), return_tensors="pt").input_ids
        out = model.generate(ids, do_sample=True, max_new_tokens=max_new_tokens, pad_token_id=tok.eos_token_id)
        return tok.decode(out[0, ids.shape[1]:], skip_special_tokens=True)
    return answer


def generate(spec: Spec, out: Path, count: int, seed: int, teacher) -> int:
    """Rows 0..count-1 of generated.jsonl (those already there are kept); returns rows written."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / GENERATED
    done = len(path.read_text(encoding="utf-8").splitlines()) if path.exists() else 0
    reqs = requests(spec, count, seed)
    with path.open("a", encoding="utf-8") as f:
        for i in range(done, count):
            req = reqs[i]
            completion = teacher(req, random.Random(f"{seed}:{i}"))
            f.write(json.dumps({"index": i, "prompt": req.prompt, "category": req.category, "value": req.value,
                                "completion": completion, "spec_version": spec.version}) + "\n")
            f.flush()
    return count - done


def filter_rows(spec: Spec, out: Path) -> dict:
    """sft.jsonl from the passing rows of generated.jsonl, and filter.json with the counts and
    rejection reasons per category. A category with no passing row stops the stage, naming it,
    rather than training on a set that never shows it."""
    rows = [json.loads(line) for line in (out / GENERATED).read_text(encoding="utf-8").splitlines()]
    kept, reasons = [], {c: Counter() for c in spec.categories}
    for row in rows:
        rule = spec.governing(row["category"])
        verdict = judge(rule, row["value"], row["completion"])
        reasons[row["category"]][verdict.reason] += 1
        if verdict.reason == "ok":
            kept.append({"prompt": student_prompt(Request(row["prompt"], row["category"], row["value"])),
                         "completion": row["completion"]})
    report = {"rows": len(rows), "kept": len(kept), "by_category": {c: dict(r) for c, r in reasons.items()}}
    (out / FILTER_REPORT).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    empty = [c for c in spec.categories if reasons[c]["ok"] == 0]
    if empty:
        raise DatasetError(f"{out / GENERATED}: no completion passed the spec judge for categor"
                           f"{'y' if len(empty) == 1 else 'ies'} {', '.join(empty)} (see {out / FILTER_REPORT}); "
                           f"generate more rows or fix the teacher before training on a skewed set")
    path = out / SFT_ROWS
    path.write_text("".join(json.dumps(r) + "\n" for r in kept), encoding="utf-8")
    return report


def rl_rows(spec: Spec, path: Path, count: int, seed: int) -> Path:
    """RL rows: the student's prompt and, as gold, the governing rule (rlvr.spec.judge:reward)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = [{"prompt": student_prompt(r), "answer": gold_for(spec.governing(r.category), r), "category": r.category}
            for r in requests(spec, count, seed)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def measure(spec: Spec, complete, count: int, seed: int) -> dict:
    """Compliance, over-refusal and right-citation rates of `complete(prompt) -> completion`
    on `count` held-out requests, overall and per category."""
    by = {c: Counter() for c in spec.categories}
    for req in requests(spec, count, seed):
        v = judge(spec.governing(req.category), req.value, complete(student_prompt(req)))
        by[req.category].update({"n": 1, "complied": v.complied, "over_refused": v.over_refused,
                                 "cited_right": v.cited_right})
    rate = lambda c, k: c[k] / max(c["n"], 1)  # noqa: E731
    total = sum(by.values(), Counter())
    should_comply = sum((by[c] for c in spec.categories if spec.governing(c).action != "refuse"), Counter())
    return {"compliance": rate(total, "complied"), "over_refusal": should_comply["over_refused"] / max(should_comply["n"], 1),
            "cited_right": rate(total, "cited_right"),
            "by_category": {c: {"compliance": rate(n, "complied"), "cited_right": rate(n, "cited_right")}
                            for c, n in by.items()}}
