"""A built-in verifier from the [reward] section: the one builder behind training, `rlvr verify`
and `rlvr audit`, so that the three build the same verifier from the same defaults.

`VERIFIER_OPTIONS` hands each verifier only its own settings; `build_verifier` then applies
the section's answer template to the correctness verifiers (math, exact): they see only the
committed answer (`templates.py`). No torch here: `rlvr verify` loads in well under a second.
"""

from __future__ import annotations

import difflib
from typing import Callable, Mapping

from pydantic import ValidationError

from rlvr import names
from rlvr.config.flat_keys import FLAT_REWARD, FlatKeyError, reward_without_flat_keys
from rlvr.config.reward_section import REWARD_TABLES, RewardSection
from rlvr.errors import ConfigError
from rlvr.rewards import VERIFIERS
from rlvr.rewards.sandbox.types import Limits
from rlvr.rewards.templates import TemplateVerifier

VERIFIER_OPTIONS: dict[str, Callable[[RewardSection], dict]] = names.PROGRAM_VERIFIER.bind({
    "math": lambda r: {"extract": tuple(r.options("math").extract), "timeout_s": r.options("math").timeout_s,
                       "rounded_golds": r.options("math").rounded_golds},
    "format": lambda r: {"template": r.template, "strict": r.options("format").strict},
    "code": lambda r: {"limits": Limits(wall_s=r.options("code").timeout_s, test_wall_s=r.options("code").test_timeout_s),
                       "workers": r.options("code").workers},
    "instructions": lambda r: {"strict": r.options("instructions").strict},
    # with a template the committed answer is the whole of what exact compares
    "exact": lambda r: {"case_sensitive": r.options("exact").case_sensitive, "whole_response": r.template != "none"},
}, table="VERIFIER_OPTIONS")
TEMPLATED = names.ANSWER_TEMPLATED_VERIFIER.names  # correctness verifiers that read only the committed answer


def build_verifier(name: str, section: RewardSection):
    """`VERIFIERS[name]` with its options from `section`, inside the section's template when it
    sets one and `name` is in TEMPLATED. ValueError from a verifier's own check of its options."""
    verifier = VERIFIERS[name](**VERIFIER_OPTIONS[name](section))
    if section.template != "none" and name in TEMPLATED:
        return TemplateVerifier(section.template, verifier, max_chars=verifier.max_chars)
    return verifier


def reward_section(verifier: str, options: Mapping[str, object], where: str = "--option") -> RewardSection:
    """The [reward] section of `--verifier NAME --option KEY=VALUE ...`: KEY is a [reward] key,
    unset keys keep the defaults training uses. ConfigError, one line per bad key."""
    if "verifier" in options:
        raise ConfigError(f"{where} verifier=...: name the verifier with --verifier, not an option")
    table: dict = {"verifier": verifier}
    for key, value in options.items():  # "math.timeout_s" names the key of [reward.math]
        kind, dot, name = key.partition(".")
        if dot and kind in REWARD_TABLES:
            table[kind] = {**table.get(kind, {}), name: value}
        else:
            table[key] = value
    try:
        # the old flat keys (math_timeout_s) still read; given on the command line, one no chosen kind reads is refused
        table, _ = reward_without_flat_keys(table, {f"reward.{key}" for key in options})
        return RewardSection.model_validate(table)
    except FlatKeyError as e:
        raise ConfigError(f"{where} {e.loc[-1]}: {e}") from None
    except ValidationError as e:
        raise ConfigError("\n".join(_describe(err, where) for err in e.errors())) from None


def _describe(err: Mapping, where: str) -> str:
    key = ".".join(str(part) for part in err["loc"])
    if err["type"] == "extra_forbidden":
        keys = [*RewardSection.model_fields, *FLAT_REWARD,
                *(f"{kind}.{name}" for kind, options in REWARD_TABLES.items() for name in options.model_fields)]
        close = difflib.get_close_matches(key, keys, n=1, cutoff=0.5)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        return f"{where} {key}: not a [reward] key{hint}; see docs/rewards.md"
    message = err["msg"].removeprefix("Value error, ")
    return f"{where} {key}: {message}" if key else f"{where}: {message}"
