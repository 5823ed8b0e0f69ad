"""Coding in a repository (env.kind = "repo"; docs/env-repo.md): tasks in SWE-bench's fields,
an episode's tools over its own copy of the tree, and a reward from hidden tests run with the
code verifier's per-test harness plus a gated patch comparator."""

from pathlib import Path

DATA = Path(__file__).with_name("data")  # the shipped generated tasks: train.jsonl, test.jsonl
