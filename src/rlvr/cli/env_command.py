"""`rlvr env check RECIPE_OR_ENV [--against OTHER]`: the fidelity checks of rlvr.envs.check on
a recipe's environment or a "package.module:Class"; exit status 1 when a check fails.
`rlvr env serve-openenv RECIPE_OR_ENV --port N`: that environment as an OpenEnv server
(rlvr.envs.openenv_server; docs/env-openenv.md)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def add_env_parser(sub) -> None:
    env = sub.add_parser("env", help="environment tools: `rlvr env check RECIPE_OR_ENV`")
    actions = env.add_subparsers(dest="env_action", required=True)
    ck = actions.add_parser("check", help="determinism, isolation, contract and cost of an environment")
    ck.add_argument("target", help="a recipe (name or file) with [env], or package.module:Class")
    ck.add_argument("--against", help="a second recipe or Class: replay the same traces on both (parity)")
    ck.add_argument("--episodes", type=int, default=24, help="random traces to play (default 24)")
    ck.add_argument("--turns", type=int, default=None, help="actions a trace (default: env.max_turns)")
    ck.add_argument("--seed", type=int, default=0)
    ck.add_argument("--set", dest="overrides", action="append", default=[], metavar="SECTION.KEY=VALUE")
    ck.add_argument("--against-set", dest="against_overrides", action="append", default=[],
                    metavar="SECTION.KEY=VALUE", help="overrides of the --against side only, after --set "
                    "(e.g. env.kind=\"emulated\": the same recipe played by an emulator)")
    ck.add_argument("--json", type=Path, help="write the report here")
    sv = actions.add_parser("serve-openenv", help="serve an environment as an OpenEnv server (extra openenv)")
    sv.add_argument("target", help="a recipe (name or file) with [env], or package.module:Class")
    sv.add_argument("--host", default="127.0.0.1")
    sv.add_argument("--port", type=int, default=8000)
    sv.add_argument("--max-sessions", type=int, default=64, help="episodes played at once (default 64)")
    sv.add_argument("--set", dest="overrides", action="append", default=[], metavar="SECTION.KEY=VALUE")


def run_env(args: argparse.Namespace) -> int:
    return {"check": run_env_check, "serve-openenv": run_serve_openenv}[args.env_action](args)


def run_serve_openenv(args: argparse.Namespace) -> int:
    from rlvr.envs.openenv_env import generic_client_class
    from rlvr.orchestrate.env_check_run import load_env

    generic_client_class()  # the extra's one-line error before anything loads
    import uvicorn

    from rlvr.envs.openenv_server import openenv_app

    under = load_env(args.target, args.overrides, n_tasks=1)
    print(f"rlvr env serve-openenv {args.target}: OpenEnv server on http://{args.host}:{args.port}", flush=True)
    try:
        uvicorn.run(openenv_app(under.make_env, args.max_sessions), host=args.host, port=args.port,
                    log_level="warning")
    finally:
        under.spec.close()
    return 0


def run_env_check(args: argparse.Namespace) -> int:
    from rlvr.envs.check import check_env, parity
    from rlvr.envs.traces import random_traces
    from rlvr.orchestrate.env_check_run import load_env

    under = load_env(args.target, args.overrides)
    e = under.config.env
    traces = random_traces(under.samples, args.episodes, args.turns or e.max_turns, args.seed, under.spec.tools)
    try:
        report = check_env(under.make_env, traces, max_tool_calls=e.max_tool_calls,
                           max_total_tokens=e.max_total_tokens, count_tokens=under.count_tokens)
        out = {"target": args.target, "passed": report.passed, **vars(report)}
        print_report(args.target, report)
        if args.against:
            other = load_env(args.against, [*args.overrides, *args.against_overrides])
            fid = parity(under.make_env, other.make_env, traces)
            out["parity"] = {"against": args.against, **vars(fid)}
            mismatch = f"; first mismatch {fid.first_mismatch}" if fid.first_mismatch else ""
            print(f"parity against {args.against}: fidelity {fid.fidelity:.3f} over {fid.steps} steps "
                  f"(observations {fid.observation_match:.3f}, rewards {fid.reward_agreement:.3f}, "
                  f"done {fid.done_agreement:.3f}){mismatch}")
    finally:
        under.spec.close()
    if args.json:
        args.json.write_text(json.dumps(out, indent=1, default=str))
    return 0 if report.passed else 1


def print_report(target: str, r) -> None:
    print(f"rlvr env check {target}: {r.episodes} episodes, {r.steps} steps")
    print(f"  determinism {r.determinism:.3f}   isolation {r.isolation:.3f}   "
          f"ended by the environment {r.ended_by_env:.2f}   stop reasons {r.stop_reasons}")
    print(f"  reset {1e3 * r.reset_s[0]:.2f} ms mean, {1e3 * r.reset_s[1]:.2f} max; "
          f"step {1e3 * r.step_s[0]:.2f} ms mean, {1e3 * r.step_s[1]:.2f} max"
          + (f"; first observation up to {r.first_tokens_max} tokens" if r.first_tokens_max is not None else ""))
    print("  PASSED" if r.passed else "  FAILED:\n" + "\n".join(f"  - {p}" for p in r.problems))
