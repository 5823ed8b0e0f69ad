"""Fuzz the inputs a user hands rlvr: recipes (TOML text), `--set` overrides, jsonl datasets.

Each generated input is either accepted, and then valid (the config round-trips through its
TOML dump, a dataset's samples are non-empty valid Unicode), or refused with the project's
one-line error (`ConfigError` / `DatasetError`). Any other exception, or an example that runs
past ALARM_S, fails the test. Bounded to about 1,200 examples (~20 s on 2 cores).

`pytest tests/test_fuzz_inputs.py -s` prints the count of examples and of distinct error kinds.
"""

from __future__ import annotations

import json
import os
import re
import signal
import tempfile
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rlvr.config import Config, dump_config, load_config
from rlvr.config.schema import MAX_ARITHMETIC_PROBLEMS
from rlvr.errors import ConfigError, DatasetError
from rlvr.tasks import arithmetic_splits, load_jsonl
from rlvr.tasks.jsonl import json_object

ALARM_S = 10  # one example taking this long counts as a hang
# RLVR_FUZZ_SCALE=N runs N times the examples; RLVR_FUZZ_RANDOM=1 a fresh random draw (the
# default is seeded, the same cases every run).
SCALE = int(os.environ.get("RLVR_FUZZ_SCALE", "1"))
FUZZ = settings(deadline=None, derandomize=not os.environ.get("RLVR_FUZZ_RANDOM"), database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
SEEN: dict[str, Counter] = {"cases": Counter(), "errors": Counter()}


@contextmanager
def no_hang():
    def alarm(signum, frame):
        raise TimeoutError(f"an input took over {ALARM_S} s")
    previous = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(ALARM_S)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def error_kind(message: str) -> str:
    """The message with its place, quoted parts and numbers blanked: one kind per sentence shape."""
    text = re.sub(r"^(--set|<defaults>|\S+?:\d+|\S+\.(toml|jsonl)):\s*", "", message.splitlines()[0])
    text = re.sub(r"^[a-z_0-9]+(\.[a-z_0-9]+)+: ", "", text)  # the field: kinds are about the problem
    text = re.sub(r"'[^']*'|\"[^\"]*\"|\(got .*?\)$|0x[0-9a-f]{2}|\\u[0-9a-f]{4}", "Q", text)
    text = re.sub(r"-?\d[\d.e+\-]*", "N", text)
    return " ".join(text.split()[:7])


def record(kind: str, error: Exception | None) -> None:
    SEEN["cases"][kind] += 1
    if error is not None:
        if kind not in ("set", "toml"):  # a config error lists one problem a line; a row error is one line
            assert len(str(error).splitlines()) == 1, str(error)
        SEEN["errors"][error_kind(str(error))] += 1


# ---- values a field might be given, good and bad ------------------------------------------------

def section_fields() -> list[str]:
    """Every section's keys; of a section keyed on kind ([task]), every kind's."""
    from rlvr.config.load import section_variants

    return sorted({f"{s}.{k}" for s, field in Config.model_fields.items()
                   for model in section_variants(field.annotation) for k in model.model_fields})


FIELDS = section_fields()
TOML_VALUES = st.one_of(
    st.sampled_from(["nan", "inf", "-inf", "+inf", "1e400", "-1e400", "1e300", "1e-300", "0", "-1", "-0.0",
                     "true", "false", "1", "2", "8", "100", "0.5", "0.9", "1.0", "3e-4",
                     "9223372036854775807", "9223372036854775808", "1" + "0" * 40, "'x'", '"\\ud800"', "'+-'",
                     "[]", "[1, 2]", "[true]", "[0.9, nan]", "['a']", "{a = 1}", "[[1]]", "''", "\"\"\"\"",
                     "jsonl", "arithmetic", "async", "ray", "gae", "none", "cuda:0", "auto", "-", "*", "/",
                     "[" * 300 + "]" * 300, "x" * 500, "1979-05-27", "\ud800", "\x00",
                     # issue 26: 2^62, 1e30, quoted numbers, names with spaces or slashes, long names
                     "4611686018427387904", "1e30", "1000000", "'1e-3'", "'8'", "' a'", "'a '", "'a/b'", "'..'",
                     "'" + "n" * 300 + "'", "'/tmp/" + "d" * 300 + "'", "[[]]", "['1']"]),
    st.integers(min_value=-(2**70), max_value=2**70).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.text(max_size=12),
)
KEYS = st.one_of(st.sampled_from(FIELDS), st.sampled_from(FIELDS).map(lambda k: k + "x"),
                 st.text(alphabet="abcdefghijklmnopqrstuvwxyz._", min_size=0, max_size=20),
                 st.sampled_from(["train", "train.lr.x", ".", "a..b", "run.name.deep", "reward.judge.samples"]))


@settings(FUZZ, max_examples=400 * SCALE)
@given(st.lists(st.tuples(KEYS, TOML_VALUES).map(lambda kv: f"{kv[0]}={kv[1]}"), min_size=1, max_size=4))
def test_set_overrides_are_accepted_valid_or_refused(overrides):
    check_config(lambda: load_config(None, overrides), "set")


def toml_line(key: str, value: str) -> str:
    section, _, name = key.rpartition(".")
    return f"[{section}]\n{name} = {value}\n" if section else f"{name} = {value}\n"


MUTATIONS = st.sampled_from(["none", "bad_utf8", "truncate", "duplicate", "junk_line"])


@settings(FUZZ, max_examples=300 * SCALE)
@given(st.lists(st.tuples(st.sampled_from(FIELDS), TOML_VALUES), min_size=1, max_size=5), MUTATIONS,
       st.integers(min_value=0, max_value=400))
def test_recipe_files_are_accepted_valid_or_refused(tmp_path_factory, fields, mutation, cut):
    text = "".join(toml_line(k, v) for k, v in fields).encode("utf-8", "surrogatepass")
    text = {"none": text, "bad_utf8": text[:cut] + b"\xff\xfe" + text[cut:], "truncate": text[:cut],
            "duplicate": text + text, "junk_line": text + b"= = =\n[[[\n"}[mutation]
    path = tmp_path_factory.mktemp("recipe") / "r.toml"
    path.write_bytes(text)
    check_config(lambda: load_config(path), "toml")


def check_config(load, kind: str) -> None:
    with no_hang():
        try:
            config = load()
        except ConfigError as e:
            record(kind, e)
            return
        record(kind, None)
        with tempfile.TemporaryDirectory() as folder:  # the run folder's config.toml loads back the same
            saved = Path(folder) / "config.toml"
            saved.write_text(dump_config(config), encoding="utf-8")
            assert load_config(saved) == config
        t = config.task
        if t.kind == "arithmetic" and (t.high - t.low + 1) ** 2 * len(t.ops) <= 20_000:
            train, test = arithmetic_splits(seed=t.seed, test_size=t.test_size, low=t.low, high=t.high, ops=t.ops)
            assert train and len(test) == t.test_size
        assert t.kind != "arithmetic" or (t.high - t.low + 1) ** 2 * len(t.ops) <= MAX_ARITHMETIC_PROBLEMS


# ---- dataset rows --------------------------------------------------------------------------------

JUNK = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(min_value=-(10**30), max_value=10**30),
              st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=8),
              st.sampled_from(["\ud800", "a\udfffb", "", " ", "\x00", "1e400"])),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner, max_size=3)),
    max_leaves=8,
)
ROW = st.fixed_dictionaries(
    {}, optional={"prompt": st.one_of(st.text(max_size=10), JUNK), "answer": st.one_of(st.text(max_size=6), JUNK),
                  "id": JUNK, "meta": JUNK, "extra": JUNK})
RAW_LINES = st.sampled_from([
    b'{"prompt": "a", "answer": 1, "answer": 2}', b'{"prompt": "a", "answer": NaN}', b'{"prompt": "a", "answer": 1e400}',
    b'{"prompt": "a", "answer": ' + b"9" * 5000 + b"}", b"[" * 20_000, b'{"prompt": "\xc3\x28", "answer": 1}',
    b"\xef\xbb\xbf{}", b'{"prompt": "a", "answer": -Infinity}', b"null", b'"text"', b"{", b"\x00\x01\x02",
    b'{"prompt": "\\udc00", "answer": "x"}', b'{"prompt": "ok", "answer": "1"}', b"",
])
LINE = st.one_of(ROW.map(lambda r: json.dumps(r, ensure_ascii=False).encode("utf-8", "surrogatepass")),
                 ROW.map(lambda r: json.dumps(r).encode()), RAW_LINES,
                 st.binary(max_size=24))


@settings(FUZZ, max_examples=300 * SCALE)
@given(st.lists(LINE, min_size=1, max_size=5))
def test_datasets_are_accepted_valid_or_refused(tmp_path_factory, lines):
    path = tmp_path_factory.mktemp("data") / "d.jsonl"
    path.write_bytes(b"\n".join(line.replace(b"\n", b" ") for line in lines) + b"\n")
    with no_hang():
        try:
            samples = load_jsonl(path)
        except DatasetError as e:
            record("dataset", e)
            assert str(e).startswith(str(path)), str(e)
            return
    record("dataset", None)
    for s in samples:
        assert s.prompt.strip() and s.answer.strip()
        s.prompt.encode("utf-8"), s.answer.encode("utf-8")  # valid Unicode: no lone surrogates


@settings(FUZZ, max_examples=300 * SCALE)
@given(LINE)
def test_the_shared_row_reader_takes_bytes(line):
    with no_hang():
        try:
            row = json_object(line, "w:1", ("prompt",), {"prompt", "answer", "id", "meta", "extra"})
        except DatasetError as e:
            record("row", e)
            assert str(e).startswith("w:1: ")
            return
    record("row", None)
    json.dumps(row, allow_nan=False).encode("utf-8")  # it can be written back out, unchanged


def test_zz_report_fuzz_counts():
    """Runs last in this file: prints what the fuzz saw (with -s)."""
    if not SEEN["cases"]:
        pytest.skip("run with the fuzz tests")
    total = sum(SEEN["cases"].values())
    print(f"\nfuzz: {total} cases ({dict(SEEN['cases'])}), {sum(SEEN['errors'].values())} refused, "
          f"{len(SEEN['errors'])} distinct error kinds:")
    for kind, n in SEEN["errors"].most_common():
        print(f"  {n:5d}  {kind}")
