"""Options keyed on a kind inside a section: the options that only one kind of an axis reads
(algo.surrogate = "dual_clip" reads `clip_c`; reward.verifier = "math" reads `timeout_s`) live
in a sub-table named after that kind ([algo.dual_clip], [reward.math]). The table of a chosen
kind is filled with its defaults when a recipe leaves it out; the table of a kind not chosen
is refused, naming its keys and the setting that would read them. [algo] and [reward] use it
(config/algo_section.py, config/reward_section.py), as [task] and [env] are keyed on `kind`.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping


def with_kind_tables(section: str, data: Any, tables: Mapping[str, type], chosen: Iterable[str],
                     reader: Mapping[str, str]) -> Any:
    """`data` (a section's table) with the tables of the `chosen` kinds present ({} when left
    out). ValueError for a table of a kind not chosen: `reader[kind]` says what reads it, e.g.
    "algo.surrogate = 'sapo'"."""
    if not isinstance(data, dict):
        return data
    chosen = set(chosen)
    for kind in tables:
        if kind in data and kind not in chosen and data[kind] is not None:
            given = data[kind]
            keys = list(given) if isinstance(given, dict) and given else [""]
            named = " / ".join(f"{section}.{kind}" + (f".{k}" if k else "") for k in keys)
            raise ValueError(f"{named} is read only when {reader[kind]}")
    return {**data, **{kind: {} for kind in chosen if kind in tables and data.get(kind) is None}}


def chosen_table(section: Any, tables: Mapping[str, type], kind: str) -> Any:
    """The options table of `kind` in a validated `section`, None when that kind has none."""
    return getattr(section, kind) if kind in tables else None


def without_switched_tables(section: str, data: Any, axes: Mapping[str, Iterable[str]],
                            overridden: Iterable[str]) -> tuple[Any, list[str]]:
    """`data` (a section's table) without the tables of kinds that a --set on their axis switched
    away from (recipes/ppo.toml's [algo.gae] under `--set algo.advantage=reinforce_pp`): the
    recipe chose that kind, the command line overrode the choice, so its table goes with it.
    A table with a key of its own given by --set stays (and is refused as not chosen).
    Returns the table and one "dropped ..." line per table."""
    if not isinstance(data, dict):
        return data, []
    overridden = set(overridden)
    out, dropped = dict(data), []
    for axis, kinds in axes.items():
        if f"{section}.{axis}" not in overridden:
            continue
        for kind in kinds:
            own_set = any(o.startswith(f"{section}.{kind}.") for o in overridden)
            if kind != data.get(axis) and kind in out and not own_set:
                del out[kind]
                dropped.append(f"{section}.{kind} dropped: --set {section}.{axis}={data.get(axis)} chose another kind")
    return out, dropped
