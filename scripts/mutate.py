"""Break the code on purpose, one break at a time, and count how many the tests catch.

Each mutant is applied to a scratch copy of the checkout (src/, tests/, recipes/, models/,
pyproject.toml), never to the checkout itself; the tests named for it run there with `-x`
(the first failure is enough), and the mutant is "caught" when they fail. Two kinds:

- named breaks (MUTANTS below): a text replacement in one file, e.g. the sign of the KL
  penalty in the reward, a refill that returns one group too many;
- every cross-field rule of the config deleted in turn: each `if ...: yield "..."` in
  src/rlvr/config/coherence*.py, found by parsing the file, not by its text.

    python scripts/mutate.py                 # all mutants, their own test folders
    python scripts/mutate.py --only kl_sign  # one
    python scripts/mutate.py --list

A mutant whose text is not found in its file is reported as "stale" (the code moved): the
script fails then, so that the list follows the code.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
COPIED = ("src", "tests", "recipes", "models", "pyproject.toml")
RULE_GLOB = "src/rlvr/config/coherence*.py"
RULE_TESTS = ("tests/config", "tests/train/test_schedule.py",  # the LR-schedule rules beside the schedule
              "tests/envs/test_credit_run.py", "tests/envs/test_textarena_env.py")  # the env credit and game rules


@dataclass(frozen=True)
class Mutant:
    name: str
    path: str
    old: str
    new: str
    tests: tuple[str, ...]


STEPS, BUILDER = "src/rlvr/orchestrate/batch_steps.py", "src/rlvr/orchestrate/batch_builder.py"
CHAIN_TESTS = ("tests/orchestrate", "tests/algo")
PLAN, PARTS = "src/rlvr/orchestrate/plan.py", "src/rlvr/orchestrate/components.py"
SPEC, TRAINER = "src/rlvr/orchestrate/batch_spec.py", "src/rlvr/train/trainer.py"
WIRING_TESTS = ("tests/orchestrate/test_every_field.py", "tests/orchestrate/test_plan.py")
TRAINER_TESTS = ("tests/train/test_trainer.py",)
MUTANTS = [
    # The batch chain (orchestrate/batch_builder.py, batch_steps.py).
    Mutant("kl_sign_in_the_group_advantage", STEPS, "rewards - kl_penalty.sum(1)", "rewards + kl_penalty.sum(1)",
           CHAIN_TESTS),
    Mutant("kl_penalty_negated", STEPS, '    return penalty, {"reward/kl',
           '    penalty = -penalty\n    return penalty, {"reward/kl', CHAIN_TESTS),
    Mutant("kl_sign_in_gae", STEPS, "token_rewards = token_rewards - kl_penalty",
           "token_rewards = token_rewards + kl_penalty", CHAIN_TESTS),
    Mutant("kl_sign_in_reinforce_pp", "src/rlvr/algo/returns.py", "token_rewards - kl_penalty * mask",
           "token_rewards + kl_penalty * mask", CHAIN_TESTS),
    Mutant("truncation_mask_skipped", BUILDER, "mask, more = steps.mask_truncated_rows(",
           "_, more = steps.mask_truncated_rows(", CHAIN_TESTS),
    Mutant("advantage_not_masked", BUILDER, "    adv = adv * mask\n", "", CHAIN_TESTS),
    Mutant("lm_weights_from_shaped_rewards", BUILDER, "imitation_weights(mask, outcomes.rewards,",
           "imitation_weights(mask, rewards,", CHAIN_TESTS),
    Mutant("mismatch_keeps_the_engines_pi_old", BUILDER, "old_logp=trainer_logp, is_weight", "is_weight", CHAIN_TESTS),
    Mutant("overlong_penalty_sign", STEPS, "return rewards + penalty,", "return rewards - penalty,", CHAIN_TESTS),
    Mutant("lam_critic_ignored", STEPS, "lam_critic=spec.lam if spec.lam_critic is None else spec.lam_critic",
           "lam_critic=spec.lam", CHAIN_TESTS),
    Mutant("covariance_before_the_truncation_mask", BUILDER, "covariance_selection(adv, batch.old_logp, mask,",
           "covariance_selection(adv, batch.old_logp, batch.completion_mask,", CHAIN_TESTS),
    Mutant("logprobs_without_temperature", STEPS, "batch_logprobs(model, batch, temperature)",
           "batch_logprobs(model, batch)", CHAIN_TESTS),
    # Which groups a step trains on, and where they come from.
    Mutant("refill_one_group_too_many", "src/rlvr/orchestrate/dynamic_sampling.py",
           "return kept[: s.prompts_per_step], counts", "return kept[: s.prompts_per_step + 1], counts",
           ("tests/orchestrate",)),
    Mutant("refill_one_round_too_many", "src/rlvr/orchestrate/dynamic_sampling.py",
           "rounds < s.max_refill_rounds", "rounds <= s.max_refill_rounds", ("tests/orchestrate",)),
    Mutant("producer_returns_a_group_twice", "src/rlvr/orchestrate/rollouts.py",
           "return Produced(groups, counts,", "return Produced(groups + groups[:1], counts,",
           ("tests/orchestrate",)),
    Mutant("async_admits_one_version_too_stale", "src/rlvr/orchestrate/producers.py",
           "self.pushed_version >= i - self.max_staleness", "self.pushed_version >= i - self.max_staleness - 1",
           ("tests/orchestrate",)),
    Mutant("checkpoint_stores_the_drawn_state", "src/rlvr/orchestrate/producers.py",
           "return self.pending_states[0] if self.pending_states else self.source.state()",
           "return self.source.state()", ("tests/orchestrate",)),
    Mutant("vapo_pretraining_trains_the_policy", "src/rlvr/orchestrate/learner.py",
           "steps_done < self.config.critic.pretrain_steps", "steps_done < 0", ("tests/orchestrate",)),
    # The config reaching the objective, the batch chain and the trainer (issue 28): each field's
    # wiring, checked by tests/orchestrate/test_every_field.py.
    Mutant("objective_drops_off_policy_delta", PLAN, '"positive_lm_coef", "off_policy_delta",', '"positive_lm_coef",',
           WIRING_TESTS),
    Mutant("objective_takes_the_default_surrogates_args", PLAN, "SURROGATE_PARAMS[a.surrogate]",
           'SURROGATE_PARAMS["ppo_clip"]', WIRING_TESTS),
    Mutant("max_grad_norm_ignored", PARTS, "max_grad_norm=t.max_grad_norm,\n", "\n", WIRING_TESTS),
    Mutant("trainer_temperature_fixed", PARTS, '"temperature": config.sampling.temperature', '"temperature": 1.0',
           WIRING_TESTS),
    Mutant("critic_value_clip_ignored", PARTS, '"clip_eps": cr.value_clip', '"clip_eps": 0.2', WIRING_TESTS),
    Mutant("sampling_top_k_dropped", PARTS, "top_k=s.top_k,", "", WIRING_TESTS),
    Mutant("mismatch_table_not_read", SPEC, 'MismatchSpec(a.mismatch, **table_args(a, "mismatch"))',
           "MismatchSpec(a.mismatch)", WIRING_TESTS),
    Mutant("lam_critic_not_read", SPEC, "options.model_dump()", 'options.model_dump(exclude={"lam_critic"})',
           WIRING_TESTS),
    Mutant("kl_cov_coef_not_read", PLAN, "KL_COV_COEF if kl_cov is None else kl_cov.coef", "KL_COV_COEF",
           WIRING_TESTS),
    Mutant("dr_grpo_constant_always_the_budget", PLAN,
           "float(config.sampling.max_new_tokens) if constant is None else constant",
           "float(config.sampling.max_new_tokens)", WIRING_TESTS),
    # [algo] / [reward] keyed on kind: the old flat keys' migration, and the refusal of a table
    # of a kind not chosen (config/flat_keys.py, config/kind_tables.py).
    Mutant("flat_lam_critic_not_migrated", "src/rlvr/config/flat_keys.py",
           '"lam_critic": ("advantage", "lam_critic"), ', "", ("tests/config",)),
    Mutant("table_of_an_unchosen_kind_accepted", "src/rlvr/config/kind_tables.py",
           "if kind in data and kind not in chosen and data[kind] is not None:", "if False:", ("tests/config",)),
    # The trainer (train/trainer.py).
    Mutant("trainer_ignores_max_grad_norm", TRAINER, "clip_grad_norm_(stepped, self.optim.max_grad_norm)",
           'clip_grad_norm_(stepped, float("inf"))', TRAINER_TESTS),
    Mutant("trainer_drops_the_last_micro_batch", TRAINER, ".split(self.micro_batch_size):",
           ".split(self.micro_batch_size)[:1]:", TRAINER_TESTS),
    Mutant("trainer_logprobs_without_temperature", TRAINER, "completion_logprobs(self.model, micro, self.temperature,",
           "completion_logprobs(self.model, micro, 1.0,", TRAINER_TESTS),
    Mutant("trainer_keeps_the_last_steps_gradients", TRAINER, "        self.optimizer.zero_grad(set_to_none=True)\n",
           "", TRAINER_TESTS),
    # Registries: a table entry without its name.
    Mutant("registry_entry_without_its_name", "src/rlvr/algo/surrogates.py",
           '"dro": dro,', '"dro": dro, "unnamed": dro,', ("tests/test_registries.py", "tests/algo")),
]


def rule_mutants() -> list[Mutant]:
    """One mutant per cross-field rule: its `yield "sentence"` statement replaced by `pass`."""
    mutants = []
    for path in sorted(REPO.glob(RULE_GLOB)):
        rel = str(path.relative_to(REPO))
        text = path.read_text()
        lines = text.splitlines(keepends=True)
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Yield):
                old = "".join(lines[node.lineno - 1: node.end_lineno])
                if text.count(old) != 1:  # the same sentence twice: deleting one is not a rule deleted
                    continue
                indent = old[: len(old) - len(old.lstrip())]
                mutants.append(Mutant(f"rule_deleted:{path.stem}:{node.lineno}", rel, old, f"{indent}pass\n",
                                      RULE_TESTS))
    return mutants


def scratch_copy(root: Path) -> Path:
    for name in COPIED:
        src = REPO / name
        if src.is_dir():
            shutil.copytree(src, root / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        elif src.exists():
            shutil.copy2(src, root / name)
    return root


def run_mutant(m: Mutant, root: Path) -> str:
    """'caught', 'missed' or 'stale'."""
    target = root / m.path
    original = target.read_text()
    if original.count(m.old) != 1:
        return "stale"
    target.write_text(original.replace(m.old, m.new))
    try:
        env = {**os.environ, "PYTHONPATH": str(root / "src"), "OMP_WAIT_POLICY": "PASSIVE"}
        cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-m", "not slow", "-p", "no:cacheprovider", *m.tests]
        done = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True)
        return "caught" if done.returncode != 0 else "missed"
    finally:
        target.write_text(original)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", action="append", help="run the mutants whose name starts with this")
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--tests", nargs="+", help="run these tests for every mutant instead of its own")
    args = parser.parse_args()
    mutants = MUTANTS + rule_mutants()
    if args.only:
        mutants = [m for m in mutants if any(m.name.startswith(o) for o in args.only)]
    if args.tests:
        mutants = [dataclasses.replace(m, tests=tuple(args.tests)) for m in mutants]
    if args.list:
        print("\n".join(f"{m.name}  ({m.path})" for m in mutants))
        return 0
    results = {}
    with tempfile.TemporaryDirectory(prefix="rlvr-mutate-") as tmp:
        root = scratch_copy(Path(tmp))
        for m in mutants:
            t0 = time.perf_counter()
            results[m.name] = run_mutant(m, root)
            print(f"{results[m.name]:7s} {m.name}  ({time.perf_counter() - t0:.0f} s)", flush=True)
    caught = sum(r == "caught" for r in results.values())
    stale = [n for n, r in results.items() if r == "stale"]
    print(f"\n{caught} of {len(results)} mutants caught; missed: "
          f"{', '.join(n for n, r in results.items() if r == 'missed') or 'none'}")
    if stale:
        print(f"stale (text not found, update MUTANTS): {', '.join(stale)}")
    return 1 if stale or caught < len(results) else 0


if __name__ == "__main__":
    sys.exit(main())
