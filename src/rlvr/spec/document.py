"""A spec as a file: a version, the categories of request it governs, and rules.

    version = "1.0"
    categories = ["arithmetic", "cooking", "lock_picking", ...]

    [[rule]]
    id = "R1"
    category = "lock_picking"        # the category of request this rule governs
    action = "refuse"                # refuse | comply | comply_with_resource
    resource = "..."                 # comply_with_resource: what the answer must point to
    text = "Refuse to explain how to open a lock without its key."

Refused at load, naming the file and line: not TOML, a missing or empty field, a duplicate
rule id, a rule citing a category the spec does not list, an unknown action, a resource
missing where the action needs one. `check` reports what a loadable spec still gets wrong:
rules that conflict (one category, different actions), rules that overlap (one category, the
same action twice), and categories with no rule.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from rlvr.errors import ConfigError

ACTIONS = ("refuse", "comply", "comply_with_resource")


@dataclass(frozen=True)
class Rule:
    id: str
    category: str
    action: str
    text: str
    resource: str = ""
    line: int = 0  # the line of its [[rule]] header in the file


@dataclass(frozen=True)
class Spec:
    version: str
    categories: tuple[str, ...]
    rules: tuple[Rule, ...]
    path: str = "<spec>"

    def governing(self, category: str) -> Rule | None:
        """The rule for a category: the first listed (check() reports any other)."""
        return next((r for r in self.rules if r.category == category), None)

    def as_text(self) -> str:
        """The spec as the teacher reads it in context."""
        lines = [f"Spec version {self.version}."]
        lines += [f"[{r.id}] ({r.category}) {r.text}" for r in self.rules]
        return "\n".join(lines)


def load_spec(path: str | Path) -> Spec:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
        data = tomllib.loads(text)
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: cannot read the spec ({e})") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: not valid TOML ({e})") from None
    headers = [n for n, line in enumerate(text.splitlines(), 1) if re.match(r"\s*\[\[rule\]\]", line)]
    version = data.get("version")
    if not isinstance(version, str) or not version.strip():
        raise ConfigError(f"{path}: 'version' is required (a string such as \"1.0\")")
    categories = data.get("categories")
    if not isinstance(categories, list) or not categories or not all(isinstance(c, str) and c for c in categories):
        raise ConfigError(f"{path}: 'categories' is required (a non-empty list of names)")
    rows = data.get("rule", [])
    rules = tuple(parse_rule(row, f"{path}:{headers[i] if i < len(headers) else '?'}", set(categories),
                             headers[i] if i < len(headers) else 0) for i, row in enumerate(rows))
    seen: dict[str, Rule] = {}
    for rule in rules:
        if rule.id in seen:
            raise ConfigError(f"{path}:{rule.line}: duplicate rule id {rule.id!r} (first at line {seen[rule.id].line})")
        seen[rule.id] = rule
    if not rules:
        raise ConfigError(f"{path}: no [[rule]] in the spec")
    return Spec(version, tuple(categories), rules, str(path))


def parse_rule(row: dict, where: str, categories: set[str], line: int) -> Rule:
    fields = {}
    for name in ("id", "category", "action", "text"):
        value = row.get(name)
        if not isinstance(value, str) or not value.strip():
            raise ConfigError(f"{where}: rule field {name!r} is missing or empty")
        fields[name] = value.strip()
    unknown = set(row) - {"id", "category", "action", "text", "resource"}
    if unknown:
        raise ConfigError(f"{where}: unknown rule field {sorted(unknown)[0]!r}")
    if fields["category"] not in categories:
        raise ConfigError(f"{where}: rule {fields['id']} cites category {fields['category']!r}, which is not in "
                          f"'categories' ({', '.join(sorted(categories))})")
    if fields["action"] not in ACTIONS:
        raise ConfigError(f"{where}: rule {fields['id']}: action {fields['action']!r} is not one of {', '.join(ACTIONS)}")
    resource = row.get("resource", "")
    if fields["action"] == "comply_with_resource" and (not isinstance(resource, str) or not resource.strip()):
        raise ConfigError(f"{where}: rule {fields['id']}: action 'comply_with_resource' needs a 'resource'")
    return Rule(**fields, resource=str(resource).strip(), line=line)


def check(spec: Spec) -> list[str]:
    """One line a problem: conflicts, overlaps, categories with no rule (empty: none)."""
    problems = []
    for category in spec.categories:
        rules = [r for r in spec.rules if r.category == category]
        if not rules:
            problems.append(f"{spec.path}: category {category!r} has no rule")
        for later in rules[1:]:
            kind = "overlaps" if later.action == rules[0].action else "conflicts with"
            problems.append(f"{spec.path}:{later.line}: rule {later.id} ({later.action}) {kind} rule {rules[0].id} "
                            f"({rules[0].action}, line {rules[0].line}) on category {category!r}")
    return problems
