"""`rlvr spec`: a spec as a file, checked, and the deliberative-alignment pipeline's stages
(rlvr.orchestrate.spec_pipeline; docs/spec-training.md)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

HELP = "check a spec file, and generate / filter / measure data for training against it"


def add_parser(sub: argparse._SubParsersAction) -> None:
    sp = sub.add_parser("spec", help=HELP, description=HELP + ". See docs/spec-training.md.")
    stages = sp.add_subparsers(dest="stage", metavar="STAGE", required=True)
    check = stages.add_parser("check", help="conflicting or overlapping rules, categories with no rule")
    check.add_argument("spec", type=Path)
    gen = stages.add_parser("generate", help="a teacher with the spec in context answers prompts")
    gen.add_argument("spec", type=Path)
    gen.add_argument("--out", type=Path, required=True, help="the pipeline's folder")
    gen.add_argument("--count", type=int, default=1000)
    gen.add_argument("--seed", type=int, default=0)
    gen.add_argument("--teacher", default="scripted", help="'scripted' (reads the rules) or a model folder")
    gen.add_argument("--noise", type=float, default=0.3, help="scripted: share of rows that apply a wrong rule")
    filt = stages.add_parser("filter", help="keep completions the spec judge passes; write sft.jsonl")
    filt.add_argument("spec", type=Path)
    filt.add_argument("--out", type=Path, required=True)
    rl = stages.add_parser("rl-data", help="prompts with their governing rule as gold, for `rlvr train`")
    rl.add_argument("spec", type=Path)
    rl.add_argument("--out", type=Path, required=True, help="a jsonl file")
    rl.add_argument("--count", type=int, default=1000)
    rl.add_argument("--seed", type=int, default=1)
    me = stages.add_parser("measure", help="compliance, over-refusal, right citation on held-out prompts")
    me.add_argument("spec", type=Path)
    me.add_argument("model", type=Path)
    me.add_argument("--count", type=int, default=200)
    me.add_argument("--seed", type=int, default=2, help="the held-out split (generate uses 0, rl-data 1)")


def run_spec(args: argparse.Namespace) -> int:
    from rlvr.spec.document import check, load_spec

    spec = load_spec(args.spec)
    if args.stage == "check":
        problems = check(spec)
        print("\n".join(problems) if problems else f"{args.spec}: {len(spec.rules)} rules over "
              f"{len(spec.categories)} categories, no conflict, overlap or uncovered category")
        return 1 if problems else 0
    from rlvr.orchestrate import spec_pipeline as pipe

    if args.stage == "generate":
        teacher = (pipe.scripted_teacher(spec, args.noise) if args.teacher == "scripted"
                   else pipe.model_teacher(spec, args.teacher))
        wrote = pipe.generate(spec, args.out, args.count, args.seed, teacher)
        print(f"wrote {wrote} rows to {args.out / pipe.GENERATED} ({args.count - wrote} were there)")
    elif args.stage == "filter":
        report = pipe.filter_rows(spec, args.out)
        print(json.dumps(report, indent=2))
    elif args.stage == "rl-data":
        print(f"wrote {pipe.rl_rows(spec, args.out, args.count, args.seed)}")
    else:
        from rlvr.orchestrate.spec_measure import greedy_completer

        print(json.dumps(pipe.measure(spec, greedy_completer(args.model), args.count, args.seed), indent=2))
    return 0
