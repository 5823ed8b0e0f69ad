"""`rlvr eval --cot-judge SPEC`: judge every sample's reasoning and print CoT-pass@k beside pass@k
(evaluate/cot_pass.py for the metric, evaluate/cot_judge.py for the judges; docs/evaluation.md)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Sequence

from rlvr.errors import ConfigError
from rlvr.evaluate.confidence import Estimate
from rlvr.evaluate.cot_judge import COT_QUESTION, SPECS, judge_groups, precomputed_for, read_precomputed
from rlvr.evaluate.cot_progress import CotProgress
from rlvr.evaluate.cot_pass import CotInput, Judged
from rlvr.evaluate.groups import PromptGroup
from rlvr.evaluate.judge_bench import Ask
from rlvr.evaluate.judge_rules import RULES, split_spec

__all__ = ["cot_input", "make_cot_ask", "print_cot"]


def make_cot_ask(spec: str, args: argparse.Namespace) -> Ask | tuple[Ask, ...] | None:
    """The reasoning judge named by --cot-judge SPEC (a tuple of judges for RULE:SPEC + SPEC);
    None for `samples[:RULE]` (precomputed)."""
    rule, specs = split_spec(spec)
    if rule is not None:
        return tuple(one_ask(s, args) for s in specs)
    kind, _, target = spec.partition(":")
    if kind == "samples" and (not target or target in RULES):
        return None
    return one_ask(spec, args)


def one_ask(spec: str, args: argparse.Namespace) -> Ask:
    """One judge; `function`, `model`, `http`, `reward`, `rules` and `recipe` are eval-judge's."""
    kind, _, target = spec.partition(":")
    if kind == "rubric" and target:
        return rubric_ask(target)
    if kind in ("function", "model", "http", "reward", "rules", "recipe") and target:
        from rlvr.cli.eval_judge_command import make_judge  # the same plumbing as rlvr eval-judge
        from rlvr.evaluate.judge_bench import RewardJudge

        if kind == "recipe" and not Path(target).is_file():
            raise ConfigError(f"--cot-judge recipe:{target}: no such recipe file")
        judge_args = argparse.Namespace(
            judge="scores" if kind == "recipe" else spec, recipe=Path(target) if kind == "recipe" else None,
            served_model=args.cot_served_model, judge_samples=args.cot_judge_samples,
            judge_max_new_tokens=args.cot_judge_max_new_tokens, judge_temperature=args.cot_judge_temperature,
            judge_top=args.cot_judge_top)
        try:
            judge = make_judge(judge_args)
        except ConfigError as e:  # its messages name eval-judge's flags
            raise ConfigError(str(e).replace("--judge", "--cot-judge").replace("--recipe ", "--cot-judge recipe:")) \
                from None
        if isinstance(judge, RewardJudge):  # a reward scores (prompt, reasoning, gold)
            return lambda prompt, response, question, reference: judge.score(prompt, response, reference)
        return judge
    raise ConfigError(f"--cot-judge {spec!r}: expected {SPECS}")


def rubric_ask(recipe: str) -> Ask:
    """The [reward] rubric of a recipe file, scoring the reasoning: P = its weighted score."""
    from rlvr.config import load_config
    from rlvr.orchestrate.model_rewards import build_rubric

    if not Path(recipe).is_file():
        raise ConfigError(f"--cot-judge rubric:{recipe}: no such recipe file")
    section = load_config(Path(recipe)).reward
    if section.verifier != "rubric" or not section.rubric:
        raise ConfigError(f"--cot-judge rubric:{recipe}: the recipe's [reward] is not a rubric "
                          f"(verifier = {section.verifier!r}); set verifier = \"rubric\" and its criteria")
    rubric = build_rubric(section)
    return lambda prompt, response, question, reference: rubric(response, reference, prompt=prompt).score


def judged_side(args: argparse.Namespace, ask, groups: Sequence[PromptGroup], file: Path | None,
                question: str, side: str) -> Judged:
    rule, _ = split_spec(args.cot_judge)
    if ask is None:  # --cot-judge samples[:RULE]: the file's own cot_p column
        target = args.cot_judge.partition(":")[2] or None
        return precomputed_for(groups, read_precomputed(file, args.cot_threshold, target))
    progress = None
    if getattr(args, "out", None) is not None:  # resumable: cot_progress.py
        settings = {"judge": args.cot_judge, "question": question, "side": side}
        progress = CotProgress(Path(args.out) / f"cot_progress{'_compare' if side == 'compare' else ''}.jsonl",
                               settings)
    return judge_groups(groups, ask, args.cot_threshold, question, rule, progress)


def cot_input(args: argparse.Namespace, ask: Ask | None, groups: Sequence[PromptGroup],
              other: Sequence[PromptGroup] | None) -> CotInput:
    """The judgements of both sides (the compared model's only with --compare)."""
    question = args.cot_question or COT_QUESTION
    compare_file = Path(args.compare) if args.compare and args.samples is not None else None
    judged = judged_side(args, ask, groups, args.samples, question, "model")
    judged_other = judged_side(args, ask, other, compare_file, question, "compare") if other is not None else None
    return CotInput(judged, judged_other, args.cot_judge, args.cot_threshold, question)


def _est(entry: dict) -> Estimate:
    return Estimate(entry["mean"], *entry["ci"])


def print_side(prefix: str, cot: dict) -> None:
    print(f"  {prefix}{'k':<5} {'pass@k':<22} {'CoT-pass@k':<22} pass - CoT (paired)")
    for k in cot["pass_at_k"]:
        print(f"  {prefix}{k:<5} {str(_est(cot['pass_at_k'][k])):<22} {str(_est(cot['cot_pass_at_k'][k])):<22} "
              f"{_est(cot['pass_minus_cot'][k])}")
    s = cot["samples"]
    print(f"  {prefix}samples: answer right & reasoning right {s['answer_right_reasoning_right']}, answer right & "
          f"reasoning wrong {s['answer_right_reasoning_wrong']} (pass@k only), answer wrong & reasoning right "
          f"{s['answer_wrong_reasoning_right']}, both wrong {s['answer_wrong_reasoning_wrong']}")


def print_cot(results: dict) -> None:
    settings = results["cot_settings"]
    print(f"CoT-pass@k: reasoning judged by {settings['judge']}, right when P >= {settings['threshold']:g} "
          f"(95% CI over prompts)")
    print_side("", results["model"]["cot"])
    if "compare" in results and "cot" in results["compare"]["model"]:
        print_side("compare ", results["compare"]["model"]["cot"])
        for k, entry in results["compare"]["diff"]["cot_pass_at_k_diff"].items():
            print(f"  diff {'CoT-pass@' + k:<12} {_est(entry)}  (compare - model, paired)")
