"""scripts/make_repo_model.py: the teacher's places (task lines and mutation sites of the
training modules only) and the disguise that makes the model copy tokens from the line."""

from __future__ import annotations

import importlib.util
import json
import random
import sys
from pathlib import Path

from rlvr.envs.repo.located import fix_line, locate, token_fix
from rlvr.envs.repo.load import load_repo_tasks

REPO = Path(__file__).resolve().parents[3]
HELD_OUT = {"calendar_math", "roman", "wordwrap"}


def load_script():
    if "make_repo_model" not in sys.modules:
        spec = importlib.util.spec_from_file_location("make_repo_model", REPO / "scripts" / "make_repo_model.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules["make_repo_model"] = module
        spec.loader.exec_module(module)
    return sys.modules["make_repo_model"]


mrm = load_script()
TRAIN = {locate(t) for t in load_repo_tasks(mrm.TRAIN, None)}
MODULES = {w.path.removesuffix(".py") for w in TRAIN}


def test_the_sites_are_one_token_fixes_of_the_training_modules_and_add_to_the_tasks():
    assert MODULES and not MODULES & HELD_OUT
    sites = mrm.sites(MODULES)
    assert all(token_fix(w) is not None and w.path.removesuffix(".py") in MODULES for w in sites)
    source = {m: (mrm.SEEDS / f"{m}.py").read_text().splitlines() for m in MODULES}
    assert all(source[w.path.removesuffix(".py")][w.line - 1] == w.fixed for w in sites)  # fixed = the module's line
    assert len(TRAIN | set(sites)) > len(TRAIN) + 30  # sites the tasks do not hold


def test_a_disguise_keeps_the_fix_but_not_the_names():
    rng, changed, numbers = random.Random(0), 0, 0
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
            changed += made.text != where.text
    assert changed > 0.8 * 4 * len(TRAIN) and numbers > 0


def test_episodes_train_on_the_call_only_and_the_call_names_a_token_of_the_shown_line():
    from rlvr.engines.loading import load_tokenizer
    from rlvr.envs import PlainRenderer

    renderer = PlainRenderer(load_tokenizer(REPO / "models" / "tiny-repo"))
    rng = random.Random(1)
    for where in sorted(TRAIN, key=lambda w: (w.path, w.line))[:40]:
        ids, labels = mrm.episode(renderer, where, rng)
        turn = renderer.tokenizer.decode([i for i, y in zip(ids, labels) if y != -100])
        body = json.loads(turn.removeprefix("<tool_call>").split("</tool_call>")[0])
        assert body["name"] == "fix" and set(body["arguments"]) == {"old", "new"}
        start = next(i for i, y in enumerate(labels) if y != -100)
        shown = renderer.tokenizer.decode(ids[:start]).rstrip("\n").rsplit(" line ", 1)[1].split(": ", 1)[1]
        assert body["arguments"]["old"] in shown.split() or body["arguments"]["old"] in shown, (shown, body)
