"""scripts/make_repo_model.py: the teacher's places (task lines and mutation sites of the
training modules only) and the disguise that makes the model copy tokens from the line."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

from rlvr.envs.repo.located import _occurrences, fix_line, locate, token_fix
from rlvr.envs.repo.load import load_repo_tasks
from tests.script_loader import load_script

REPO = Path(__file__).resolve().parents[3]
HELD_OUT = {"calendar_math", "roman", "wordwrap"}
WORD = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")

mrm = load_script("make_repo_model")
TRAIN = {locate(t) for t in load_repo_tasks(mrm.TRAIN, None)}
MODULES = {w.path.removesuffix(".py") for w in TRAIN}


def test_the_places_are_one_token_fixes_of_the_training_modules_and_hold_the_tasks():
    places = mrm.places()
    assert MODULES and not MODULES & HELD_OUT and {w.path.removesuffix(".py") for w in places} == MODULES
    assert all(token_fix(w) is not None for w in places)
    source = {m: (mrm.SEEDS / f"{m}.py").read_text().splitlines() for m in MODULES}
    assert all(source[w.path.removesuffix(".py")][w.line - 1] == w.fixed for w in places)  # fixed = the module's line
    assert TRAIN <= set(places) and len(set(places)) == len(places) == 226  # 60 sites the tasks do not hold
    assert places == sorted(places, key=lambda w: (w.path, w.line, w.text))  # seeded draws see one order


def test_a_held_out_module_is_refused(monkeypatch):
    monkeypatch.setattr(mrm, "TEST", mrm.TRAIN)  # every training module is now "held out"
    with pytest.raises(SystemExit, match="held-out modules"):
        mrm.places()


def test_a_disguise_keeps_the_fix_but_not_the_names():
    rng, changed, numbers, total, kept = random.Random(0), 0, 0, 0, 0
    for where in sorted(TRAIN, key=lambda w: (w.path, w.line)):
        for _ in range(4):
            made = mrm.disguise(where, rng)
            (old, new), (old2, new2) = token_fix(where), token_fix(made)
            if old.isdigit() and new.isdigit():
                assert int(old2) - int(new2) == int(old) - int(new)  # an off-by-one stays off by the same one
                numbers += old2 != old
            else:
                assert (old2, new2) == (old, new)
            assert fix_line(made.text + "\n", 1, old2, new2, made.path) == made.fixed + "\n"
            names, made_names = set(WORD.findall(where.text)), set(WORD.findall(made.text))
            assert names & mrm._KEEP <= made_names  # keywords and builtins stay
            if made.text != where.text:
                changed += 1
                own = names - mrm._KEEP - {"True", "False", "None"}
                total, kept = total + len(own), kept + len(own & made_names)  # a made-up name may be an old one
    assert changed > 0.8 * 4 * len(TRAIN) and numbers > 0 and kept < 0.05 * total


def test_episodes_train_on_the_call_only_and_the_call_names_a_token_of_the_shown_line():
    from rlvr.engines.loading import load_tokenizer
    from rlvr.envs import PlainRenderer

    renderer = PlainRenderer(load_tokenizer(REPO / "models" / "tiny-repo"))
    rng = random.Random(1)
    for where in mrm.places():
        ids, labels = mrm.episode(renderer, where, rng)
        assert labels[-1] == ids[-1] == renderer.tokenizer.eos_token_id
        turn = renderer.tokenizer.decode([i for i, y in zip(ids, labels) if y != -100])
        body = json.loads(turn.removeprefix("<tool_call>").split("</tool_call>")[0])
        assert body["name"] == "fix" and set(body["arguments"]) == {"old", "new"}
        start = next(i for i, y in enumerate(labels) if y != -100)
        assert labels == [-100] * start + ids[start:]  # the prompt masked, the whole turn trained
        shown = renderer.tokenizer.decode(ids[:start]).rstrip("\n").rsplit(" line ", 1)[1].split(": ", 1)[1]
        assert _occurrences(shown, body["arguments"]["old"]), (shown, body)  # a whole token of the line (maybe not unique: "other")
