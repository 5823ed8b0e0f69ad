"""Read a recipe (TOML), apply `--set section.key=value` overrides, validate, and explain.

Errors name the file, the line and the key, with a did-you-mean for misspelt keys, and are
raised as `ConfigError` before any work starts.
"""

from __future__ import annotations

import difflib
import logging
import re
import sys
import typing
from pathlib import Path
from typing import Any, Optional

import tomli_w
from pydantic import BaseModel, ValidationError

from rlvr.config.algo_section import ALGO_TABLES
from rlvr.config.flat_keys import FlatKeyError, log_moved, without_flat_keys
from rlvr.config.kind_tables import without_switched_tables
from rlvr.config.reward_section import REWARD_TABLES
from rlvr.config.schema import Config
from rlvr.errors import ConfigError

log = logging.getLogger(__name__)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def load_config(path: str | Path | None, overrides: list[str] = (), schema: type[BaseModel] = Config) -> Config:
    """Recipe file (or defaults when None) + overrides → validated `Config` (or the `schema`
    of another stage, e.g. `rlvr sft`'s `SFTConfig`)."""
    text, where = "", "<defaults>"
    if path is not None:
        path = Path(path)
        where = str(path)
        text = read_recipe(path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{where}: not valid TOML ({e})") from None
    except RecursionError:
        raise ConfigError(f"{where}: not valid TOML (nested too deeply)") from None
    for item in overrides:
        apply_override(data, item, schema)
    overridden = {".".join(parse_override(item, schema)[0]) for item in overrides}
    return validate(data, text, where, overridden, schema)


def read_recipe(path: Path) -> str:
    """The recipe's text; ConfigError naming the file (and for bad UTF-8 the line and byte)."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ConfigError(f"{path}: recipe file not found") from None
    except OSError as e:  # a folder, no permission...
        raise ConfigError(f"{path}: cannot read the recipe ({e.strerror or e})") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw.count(b"\n", 0, e.start) + 1
        raise ConfigError(f"{path}:{line}: not valid UTF-8 (byte 0x{raw[e.start]:02x} at byte offset "
                          f"{e.start}); save the recipe as UTF-8") from None


def parse_override(item: str, schema: type[BaseModel] = Config) -> tuple[list[str], Any]:
    """`"train.lr=3e-4"` → (["train", "lr"], 3e-4). The value is read as TOML when it parses
    (numbers, booleans, lists, quoted strings) and as a bare string otherwise; a text field
    (`run.name=2024`) takes the bare text as written."""
    key, sep, raw = item.partition("=")
    if not sep or not key.strip():
        raise ConfigError(f"--set {item!r}: expected section.key=value")
    keys = key.strip().split(".")
    if field_annotation(keys, schema) in (str, Optional[str]) and not raw.lstrip().startswith(("'", '"')):
        return keys, raw
    try:
        value = tomllib.loads(f"v = {raw}")["v"]
    except (tomllib.TOMLDecodeError, RecursionError):
        value = raw
    return keys, value


def field_annotation(keys: list[str], schema: type[BaseModel] = Config) -> Any:
    """The type of the config field at `keys` (e.g. ["run", "name"] → str), None if no field."""
    model: Any = schema
    for part in keys:
        sections = [m for m in section_variants(model) if part in m.model_fields]
        if not sections:
            return None
        model = sections[0].model_fields[part].annotation
    return model


def section_variants(annotation: Any) -> list[type[BaseModel]]:
    """The section models a field's annotation admits: one, or each kind of a section keyed on
    `kind` (a discriminated union such as [task])."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in typing.get_args(annotation) for m in section_variants(arg)]


def apply_override(data: dict, item: str, schema: type[BaseModel] = Config) -> None:
    keys, value = parse_override(item, schema)
    node = data
    for k in keys[:-1]:
        node = node.setdefault(k, {})
        if not isinstance(node, dict):
            raise ConfigError(f"--set {item!r}: {k!r} is not a section")
    node[keys[-1]] = value


def validate(data: dict, text: str, where: str, overridden: set[str] = frozenset(),
             schema: type[BaseModel] = Config) -> Config:
    if schema is Config:  # flat [algo] / [reward] keys of an older run folder or recipe
        try:
            data, moved = without_flat_keys(data, overridden)
        except FlatKeyError as e:
            dotted = ".".join(e.loc)
            place = "--set" if dotted in overridden else f"{where}:{find_line(text, e.loc) or ''}".rstrip(":")
            raise ConfigError(f"{place}: {e}") from None
        log_moved(where, moved)
        data = _without_switched_tables(data, overridden)
    try:
        return schema.model_validate(data)
    except ValidationError as e:
        lines = [describe(err, text, where, overridden, schema) for err in e.errors()]
        raise ConfigError("\n".join(lines)) from None


def _without_switched_tables(data: dict, overridden: set[str]) -> dict:
    """The recipe's kind tables whose kind a --set switched away, dropped with a log line each."""
    out = dict(data)
    axes = {"algo": ALGO_TABLES, "reward": {"verifier": REWARD_TABLES}}
    for section, tables in axes.items():
        out[section], dropped = without_switched_tables(section, data.get(section), tables, overridden)
        for line in dropped:
            log.warning("%s", line)
    return {k: v for k, v in out.items() if v is not None}


def describe(err: dict, text: str, where: str, overridden: set[str] = frozenset(),
             schema: type[BaseModel] = Config) -> str:
    """One line for one pydantic error: `file:line: key: problem (did you mean ...?)`."""
    loc, section = without_kind_tag([str(x) for x in err["loc"]], schema)
    dotted = ".".join(loc) if loc else "(config)"
    line = find_line(text, loc)
    place = f"{where}:{line}" if line else where
    if any(dotted == k or dotted.startswith(k + ".") or k.startswith(dotted + ".") for k in overridden):
        place = "--set"
    if err["type"] == "union_tag_invalid":
        return f"{place}: {dotted}.kind = {err['ctx']['tag']!r}: expected one of {err['ctx']['expected_tags']}"
    if err["type"] == "missing":
        return f"{place}: {required_keys(loc, schema)} is required; set it in the recipe or with --set"
    if err["type"] == "extra_forbidden":
        hint = did_you_mean(loc, section, schema)
        return f"{place}: unknown key {dotted!r}{hint}"
    if err["type"] == "missing":  # its input is the section around it: name the key itself
        return f"{place}: {dotted}: required, and not given"
    msg = err["msg"].removeprefix("Value error, ")
    if not loc:
        return f"{place}: {msg}"
    if isinstance(err.get("input"), dict):  # a section's own check: its message names the keys
        return f"{place}: {msg}"
    return f"{place}: {dotted}: {msg} (got {short_repr(err.get('input'))})"


def required_keys(loc: list[str], schema: type[BaseModel]) -> str:
    """The dotted key a "missing" error is about; for a missing section, its required keys."""
    annotation = field_annotation(loc, schema) if loc else None
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        needed = [name for name, f in annotation.model_fields.items() if f.is_required()]
        return " and ".join(".".join([*loc, name]) for name in needed) or ".".join(loc)
    return ".".join(loc)


def short_repr(value: Any, limit: int = 80) -> str:
    """repr, cut to `limit` characters so that one line stays one line."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def without_kind_tag(loc: list[str], schema: type[BaseModel] = Config) -> tuple[list[str], type[BaseModel] | None]:
    """pydantic puts the kind between a keyed section and its key (task.arithmetic.low): the
    key as a recipe writes it (task.low), and the kind's section model."""
    if len(loc) >= 2 and loc[0] in schema.model_fields:
        variants = section_variants(schema.model_fields[loc[0]].annotation)
        for model in variants:
            kind = model.model_fields.get("kind")
            if len(variants) > 1 and kind and kind.default == loc[1]:
                return [loc[0], *loc[2:]], model
    return loc, None


def did_you_mean(loc: list[str], section: type[BaseModel] | None = None, schema: type[BaseModel] = Config) -> str:
    if section is not None and len(loc) == 2:
        close = difflib.get_close_matches(loc[-1], list(section.model_fields), n=1, cutoff=0.5)
        return f" (did you mean {'.'.join(loc[:-1] + close)!r}?)" if close else \
            f" (valid keys: {', '.join(section.model_fields)})"
    model: type[BaseModel] = schema
    for part in loc[:-1]:
        field = model.model_fields.get(part)
        if field is None or not isinstance(field.annotation, type) or not issubclass(field.annotation, BaseModel):
            return ""
        model = field.annotation
    close = difflib.get_close_matches(loc[-1], list(model.model_fields), n=1, cutoff=0.5)
    return f" (did you mean {'.'.join(loc[:-1] + close)!r}?)" if close else f" (valid keys: {', '.join(model.model_fields)})"


def find_line(text: str, loc: list[str]) -> int | None:
    """Line number of `key` inside `[section]` of a recipe, or of the section header."""
    if not text or not loc:
        return None
    section, key = (loc[0], loc[1]) if len(loc) > 1 else (None, loc[0])
    current, header_line = None, None
    for n, line in enumerate(text.splitlines(), start=1):
        m = re.match(r"\s*\[([^\]]+)\]", line)
        if m:
            current = m.group(1).strip()
            if current == (section or key):
                header_line = n
            continue
        if current == section and re.match(rf"\s*{re.escape(key)}\s*=", line):
            return n
    return header_line


def dump_config(config: BaseModel) -> str:
    """The resolved config as TOML (None values are left out: they are the defaults)."""
    return tomli_w.dumps(config.model_dump(mode="json", exclude_none=True))
