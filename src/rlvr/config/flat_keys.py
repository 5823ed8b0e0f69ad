"""Flat [algo] and [reward] keys, as rlvr wrote them before those sections were keyed on kind
(a run folder's config.toml, an older recipe, `--set algo.clip_c=3`, `rlvr verify --option
math_timeout_s=1`): the one place that moves them into their kind's table
(config/algo_section.py, config/reward_section.py).

A flat key moves to the table of the kind chosen that reads it (algo.clip_c with surrogate =
"dual_clip" becomes algo.dual_clip.clip_c). Where no chosen kind reads it, a value equal to
what rlvr used to write for every run (its old default, e.g. algo.gamma = 1.0) is a leftover
and is dropped. Any other value in a file (a run folder's config.toml, an older recipe) is
dropped with a warning line, since old rlvr never read it either and a run folder must stay
loadable; given with --set it is refused, naming the key and the kind that reads it.
"""

from __future__ import annotations

import logging
from typing import Any

from rlvr.config.algo_section import ALGO_TABLES, AlgoSection
from rlvr.config.reward_section import REWARD_TABLES, RewardSection, chosen_verifiers

log = logging.getLogger(__name__)

# old [algo] key -> (its axis, its name in the kind's table)
FLAT_ALGO = {
    "clip_c": ("surrogate", "clip_c"), "sapo_tau_pos": ("surrogate", "tau_pos"), "sapo_tau_neg": ("surrogate", "tau_neg"),
    "dro_beta": ("surrogate", "beta"), "vespo_k_pos": ("surrogate", "k_pos"),
    "vespo_lambda_pos": ("surrogate", "lambda_pos"), "vespo_k_neg": ("surrogate", "k_neg"),
    "vespo_lambda_neg": ("surrogate", "lambda_neg"), "gamma": ("advantage", "gamma"), "lam": ("advantage", "lam"),
    "lam_critic": ("advantage", "lam_critic"), "lam_alpha": ("advantage", "lam_alpha"),
    "aggregation_constant": ("aggregation", "constant"), "mismatch_cap": ("mismatch", "cap"),
    "mismatch_low": ("mismatch", "low"), "cov_ratio": ("entropy_control", "ratio"),
    "cov_low": ("entropy_control", "low"), "cov_high": ("entropy_control", "high"),
    "kl_cov_coef": ("entropy_control", "coef"),
}
# old [reward] key -> (the verifier whose table it moves to, its name there)
FLAT_REWARD = {
    "extract": ("math", "extract"), "math_timeout_s": ("math", "timeout_s"),
    "math_rounded_golds": ("math", "rounded_golds"), "code_timeout_s": ("code", "timeout_s"),
    "code_test_timeout_s": ("code", "test_timeout_s"), "code_workers": ("code", "workers"),
    "format_strict": ("format", "strict"), "exact_case_sensitive": ("exact", "case_sensitive"),
    "instructions_strict": ("instructions", "strict"),
}
# What rlvr wrote for these keys into every run's config.toml (the old defaults, unset ones omitted).
OLD_DEFAULTS = {
    "algo": {"gamma": 1.0, "lam": 0.95, "mismatch_cap": 2.0, "mismatch_low": 0.5, "cov_ratio": 2e-4,
             "cov_low": 1.0, "cov_high": 5.0, "kl_cov_coef": 1.0},
    "reward": {"extract": ["boxed", "answer_tag", "answer_phrase", "whole", "math_span", "last_number"],
               "math_timeout_s": 2.0, "math_rounded_golds": False, "code_timeout_s": 10.0,
               "code_test_timeout_s": 5.0, "code_workers": 2, "format_strict": False,
               "exact_case_sensitive": False, "instructions_strict": False},
}
_logged: set[str] = set()


class FlatKeyError(ValueError):
    """A flat key no chosen kind reads, set to a value other than its old default."""

    def __init__(self, loc: list[str], message: str) -> None:
        super().__init__(message)
        self.loc = loc


def without_flat_keys(data: dict, overridden: Any = frozenset()) -> tuple[dict, list[str]]:
    """A whole config's tables with the flat [algo] / [reward] keys moved into their kind's
    table, and one "algo.clip_c → algo.dual_clip.clip_c" line per move. FlatKeyError for a key
    that no chosen kind reads (other than an old default, dropped). A flat key in `overridden`
    (given with --set) replaces the recipe's keyed one, as any --set does."""
    moved: list[str] = []
    out = dict(data)
    if isinstance(data.get("algo"), dict):
        out["algo"], m = _unflatten("algo", data["algo"], FLAT_ALGO, _algo_targets(data["algo"]), _algo_readers,
                                   overridden)
        moved += m
    if isinstance(data.get("reward"), dict):
        out["reward"], m = reward_without_flat_keys(data["reward"], overridden)
        moved += m
    return out, moved


def reward_without_flat_keys(table: dict, overridden: Any = frozenset()) -> tuple[dict, list[str]]:
    """One [reward] table (also `rlvr verify --option`'s) with its flat keys moved."""
    chosen = chosen_verifiers(table.get("verifier", RewardSection.model_fields["verifier"].default), table.get("rubric"))
    targets = {key: kind for key, (kind, _) in FLAT_REWARD.items() if kind in chosen}
    return _unflatten("reward", table, FLAT_REWARD, targets, lambda key: f"reward.verifier = {FLAT_REWARD[key][0]!r}",
                      overridden)


def log_moved(where: str, moved: list[str]) -> None:
    """One log line (once per source and set of moves) saying which keys moved where, and one
    for the flat keys of kinds not chosen, ignored as they always were."""
    ignored = [m for m in moved if " ignored, " in m]
    moves = [m for m in moved if m not in ignored]
    lines = ([f"{where}: flat keys moved into their kind's table ({', '.join(moves)}); a recipe should "
              f"spell them so (docs/config.md)"] if moves else []) + [f"{where}: {m}" for m in ignored]
    for line in lines:
        if line not in _logged:
            _logged.add(line)
            log.warning("%s", line)


def _algo_targets(table: dict) -> dict[str, str]:
    """flat key -> the chosen kind whose table reads it."""
    targets = {}
    for key, (axis, name) in FLAT_ALGO.items():
        kind = table.get(axis, AlgoSection.model_fields[axis].default)
        options = ALGO_TABLES[axis].get(kind) if isinstance(kind, str) else None
        if options is not None and name in options.model_fields:
            targets[key] = kind
    return targets


def _algo_readers(key: str) -> str:
    axis, name = FLAT_ALGO[key]
    kinds = [kind for kind, options in ALGO_TABLES[axis].items() if name in options.model_fields]
    return f"algo.{axis} = {' / '.join(map(repr, kinds))}"


def _unflatten(section: str, table: dict, moves: dict[str, tuple[str, str]], targets: dict[str, str],
               readers: Any, overridden: Any = frozenset()) -> tuple[dict, list[str]]:
    out, moved = dict(table), []
    for key in [k for k in table if k in moves]:
        value, name = out.pop(key), moves[key][1]
        kind = targets.get(key)
        if kind is None:
            if value == OLD_DEFAULTS[section].get(key, ...):
                continue  # what rlvr wrote for every run: a leftover of a kind not chosen
            if f"{section}.{key}" not in overridden:  # a file: old rlvr read nothing from it either
                moved.append(f"{section}.{key} = {value!r} ignored, as rlvr always did: only {readers(key)} reads it")
                continue
            raise FlatKeyError([section, key], f"{section}.{key} is read only when {readers(key)}; it is now "
                                               f"{section}.<kind>.{name}, in the chosen kind's table")
        options = out.get(kind) if out.get(kind) is not None else {}
        if not isinstance(options, dict):
            continue  # the section's own check names the bad table
        if name in options and f"{section}.{key}" not in overridden:
            raise FlatKeyError([section, key], f"{section}.{key} and {section}.{kind}.{name} are the same option: "
                                               f"keep {section}.{kind}.{name}")
        out[kind] = {**options, name: value}
        moved.append(f"{section}.{key} → {section}.{kind}.{name}")
    return out, moved
