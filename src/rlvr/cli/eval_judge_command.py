"""`rlvr eval-judge [FILE]`: how good is a judge, on labelled judgements (docs/evaluation.md)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rlvr.errors import ConfigError, RewardError
from rlvr.function_spec import import_function

HELP = "benchmark a judge on labelled judgements: accuracy, calibration, position bias, best-of-N"
JUDGE_HELP = ("scores (the file's judge_p_* columns, the default), function:package.module:function "
              "(called as fn(prompt, response, question, reference) -> P(yes)), model:DIR "
              "(a GenRM judge in process), http:URL (a GenRM judge behind an OpenAI-compatible server), "
              "reward:package.module:function (a reward fn(response, gold) -> float | Verdict), "
              "rubric:RECIPE.toml (its [[reward.rubric]]) or rules:RECIPE.toml (its reward.rules)")
GENRM_DEFAULTS = {"samples": 1, "max_new_tokens": 0, "temperature": 1.0}  # model: and http:


def add_parser(sub: argparse._SubParsersAction) -> None:
    ej = sub.add_parser("eval-judge", help=HELP, description=HELP + ". See docs/evaluation.md.")
    ej.add_argument("file", nargs="?", type=Path, help="labelled jsonl (default: the shipped small set)")
    ej.add_argument("--judge", default="scores", metavar="SPEC", help=JUDGE_HELP)
    ej.add_argument("--recipe", type=Path, metavar="RECIPE.toml",
                    help="the judge under test is the recipe's [reward.judge] (instead of --judge)")
    ej.add_argument("--served-model", metavar="NAME", help="http: the model name sent to the server")
    ej.add_argument("--judge-samples", type=int, help="GenRM: k reasonings, P(yes) is their mean "
                    "(default 1; with a recipe, the recipe's)")
    ej.add_argument("--judge-max-new-tokens", type=int, help="GenRM: reasoning tokens before the "
                    "verdict (default 0: answer at once; with a recipe, the recipe's)")
    ej.add_argument("--judge-temperature", type=float, help="GenRM: reasoning temperature "
                    "(default 1.0; with a recipe, the recipe's)")
    ej.add_argument("--judge-top", type=int, default=20, help="GenRM: next tokens the verdict reads "
                    "(default 20; in process, at least the vocabulary size reads all of it)")
    ej.add_argument("--threshold", type=float, default=0.5, help="P(yes) >= THRESHOLD means yes (default 0.5)")
    ej.add_argument("--bins", type=int, default=10, help="calibration bins (default 10)")
    ej.add_argument("--verifier", default="math", help="the programmatic verifier for rows with a gold "
                    "answer (a built-in name; 'none' to skip; default math)")
    ej.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    ej.add_argument("--json", action="store_true", help="print the results as JSON instead of a table")
    ej.add_argument("--save-scores", type=Path, metavar="FILE.jsonl",
                    help="write the rows with the judge's scores, for a rerun with --judge scores")


def import_judge(spec: str):
    """The function of `--judge function:SPEC` (rlvr.function_spec: no torch import)."""
    return import_function(spec, f"--judge function:{spec}", "function:package.module:function")


def function_judge(spec: str):
    fn = import_judge(spec)

    def ask(prompt: str, response: str, question: str, reference: str) -> float:
        try:
            out = fn(prompt, response, question, reference)
        except Exception as e:  # user code: say which judge failed, the row is added by the caller
            raise RewardError(f"judge {spec} raised {type(e).__name__}: {e}") from None
        return getattr(out, "score", out)  # a Verdict or a number

    return ask


def judge_section(args: argparse.Namespace, base):
    """`base` (a JudgeSection) with the --judge-* flags that were given put over it."""
    from pydantic import ValidationError

    from rlvr.config.schema import JudgeSection

    given = {"samples": args.judge_samples, "max_new_tokens": args.judge_max_new_tokens,
             "temperature": args.judge_temperature,
             "model": args.served_model if base.backend == "http" else None}
    try:
        return JudgeSection(**{**base.model_dump(), **{k: v for k, v in given.items() if v is not None}})
    except ValidationError as e:
        err = e.errors()[0]
        raise ConfigError(f"--judge-{err['loc'][0]}: {err['msg']}".replace("_", "-")) from None


def genrm_judge(args: argparse.Namespace, backend: str, target: str):
    from rlvr.config.schema import JudgeSection
    from rlvr.orchestrate.model_rewards import judge_backend
    from rlvr.rewards.judge import GenRMJudge, ReasonParams

    fields = {"model": target} if backend == "transformers" else {"url": target}
    section = judge_section(args, JudgeSection(backend=backend, **GENRM_DEFAULTS, **fields))
    params = ReasonParams(max_new_tokens=section.max_new_tokens, temperature=section.temperature)
    judge = GenRMJudge(judge_backend(section), samples=section.samples, params=params, top=args.judge_top)
    return lambda prompt, response, question, reference: judge.ask(prompt, response, question, reference).score


def recipe_judge(args: argparse.Namespace):
    """--recipe, rubric:RECIPE or rules:RECIPE (cli/judge_rewards.py); None for neither."""
    from rlvr.cli import judge_rewards as reward_judges

    kind, _, target = args.judge.partition(":")
    overrides = {"top": args.judge_top, "judge": lambda base: judge_section(args, base)}
    if getattr(args, "recipe", None) is not None:  # rlvr eval --cot-judge builds args without it
        if args.judge != "scores":
            raise ConfigError(f"--recipe names the judge under test; drop --judge {args.judge}")
        return reward_judges.recipe_genrm(args.recipe, **overrides)
    if kind in ("rubric", "rules") and target:
        build = reward_judges.rubric_judge if kind == "rubric" else reward_judges.rules_judge
        return build(target, **overrides)
    return None


def make_judge(args: argparse.Namespace):
    """The judge under test from --judge; None for the file's own scores."""
    if args.judge_top < 1:
        raise ConfigError(f"--judge-top must be >= 1, got {args.judge_top}")
    if (judge := recipe_judge(args)) is not None:
        return judge
    kind, _, target = args.judge.partition(":")
    if kind == "scores" and not target:
        return None
    if kind == "function" and target:
        return function_judge(target)
    if kind == "reward" and target:
        from rlvr.cli.judge_rewards import function_reward_judge

        return function_reward_judge(target)
    if kind == "model" and target:
        if not Path(target).is_dir():
            raise ConfigError(f"--judge model:{target}: no such model folder")
        return genrm_judge(args, "transformers", target)
    if kind == "http" and target:
        return genrm_judge(args, "http", target)
    raise ConfigError(f"--judge {args.judge!r}: expected scores, function:package.module:function, "
                      f"model:DIR, http:URL, reward:package.module:function, rubric:RECIPE.toml "
                      f"or rules:RECIPE.toml")


def make_verifier(name: str):
    from rlvr.config.schema import RewardSection
    from rlvr.rewards import VERIFIERS
    from rlvr.rewards.build import VERIFIER_OPTIONS, build_verifier

    if name == "none":
        return None
    usable = sorted(set(VERIFIERS) & set(VERIFIER_OPTIONS))
    if name not in usable:
        raise ConfigError(f"--verifier {name!r}: expected one of {usable} or 'none'")
    return build_verifier(name, RewardSection(verifier=name))


def run_eval_judge(args: argparse.Namespace) -> int:
    from rlvr.cli.eval_judge_table import table
    from rlvr.evaluate.judge_bench import benchmark, scored_rows
    from rlvr.evaluate.judge_data import load_judge_set, shipped_set

    if not 0.0 <= args.threshold <= 1.0:
        raise ConfigError(f"--threshold must be in [0, 1], got {args.threshold}")
    if args.bins < 1:
        raise ConfigError(f"--bins must be >= 1, got {args.bins}")
    data = load_judge_set(args.file or shipped_set())
    result, p, pairs = benchmark(data, make_judge(args), threshold=args.threshold, bins=args.bins,
                                 verifier=make_verifier(args.verifier), seed=args.seed)
    named = f"recipe:{args.recipe}" if args.recipe is not None else args.judge
    result = {"judge": named, "verifier": args.verifier, **result}
    if args.save_scores is not None:
        args.save_scores.write_text("".join(json.dumps(r) + "\n" for r in scored_rows(data, p, pairs)))
    print(json.dumps(result, indent=2) if args.json else table(result))
    return 0
