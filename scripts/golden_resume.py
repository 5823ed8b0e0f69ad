"""The resume fixture: a run folder written by one commit, resumed by a later one.

tests/golden/resume_run/ is the demo recipe on a 13k-parameter model (tests/golden/resume_model/,
SFT'd briefly on single-digit sums, so that groups have reward variance) stopped after step 2 of 4
the way a Ctrl-C stops it: checkpoint written, RunInterrupted. tests/golden/resume_expected.json
holds steps 3-4 of the same run uninterrupted. `check` resumes a copy of the folder and compares:
the folder's config.toml, checkpoint and metrics must keep loading through config refactors.

Run through scripts/golden_runs.py (`record` rebuilds this fixture, `check` checks it).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GOLDEN = REPO / "tests" / "golden"
MODEL = GOLDEN / "resume_model"
RUN = GOLDEN / "resume_run"
EXPECTED = GOLDEN / "resume_expected.json"
STEPS, STOP_AFTER = 4, 2
SFT_STEPS = 200  # greedy held-out accuracy ~0.3: enough groups with mixed rewards to train on

# Relative paths on purpose: the folder's config.toml must not name this machine's checkout.
OVERRIDES = [
    "run.name=resume_run", "run.output_dir=tests/golden", "model.path=tests/golden/resume_model",
    "task.low=1", "task.high=9", "task.test_size=20", f"train.steps={STEPS}", "sampling.prompts_per_step=4",
    "sampling.group_size=4", "eval.every=2", "eval.size=20", "checkpoint.every_minutes=0", "checkpoint.keep=1",
    "log.progress=none", "log.samples_per_step=4",
]


def golden_runs():
    """scripts/golden_runs.py: the thread count, the kept keys, the comparison (one copy)."""
    if "golden_runs" not in sys.modules:
        spec = importlib.util.spec_from_file_location("golden_runs", REPO / "scripts" / "golden_runs.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules["golden_runs"] = module
        spec.loader.exec_module(module)
    return sys.modules["golden_runs"]


@contextmanager
def in_repo():
    """Relative `run.output_dir` / `model.path` are read from the working directory."""
    before = os.getcwd()
    os.chdir(REPO)
    try:
        yield
    finally:
        os.chdir(before)


def build_model() -> None:
    """A 1-layer Qwen2 (hidden 32) and the char tokenizer, SFT'd on 1-9 + 1-9; deterministic."""
    import torch

    from rlvr.models import build_char_tokenizer, tiny_qwen2
    from rlvr.tasks import arithmetic_splits

    spec = importlib.util.spec_from_file_location("make_demo_model", REPO / "scripts" / "make_demo_model.py")
    make_demo_model = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_demo_model)
    tokenizer = build_char_tokenizer()
    model = tiny_qwen2(hidden_size=32, intermediate_size=64, num_layers=1, num_heads=2, num_kv_heads=1,
                       max_positions=32, seed=0)
    train, _ = arithmetic_splits(seed=0, test_size=20, low=1, high=9)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    picks = torch.Generator().manual_seed(0)
    for _ in range(SFT_STEPS):
        batch = [train[i] for i in torch.randint(len(train), (64,), generator=picks).tolist()]
        ids, labels = make_demo_model.sft_batch(tokenizer, batch, tokenizer.pad_token_id)
        loss = model(input_ids=ids, labels=labels).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
    shutil.rmtree(MODEL, ignore_errors=True)
    model.save_pretrained(MODEL, safe_serialization=True)
    tokenizer.save_pretrained(MODEL)


def config(extra: list[str] = ()):
    from rlvr.config import load_config

    return load_config(REPO / "recipes" / "demo.toml", [*OVERRIDES, *extra])


def uninterrupted_steps(tmp: Path) -> dict:
    """Steps 3-4 (metrics without wall-clock keys, and samples) of the run never stopped."""
    from rlvr.orchestrate import train

    g = golden_runs()
    folder = train(config([f"run.output_dir={tmp}"])).folder
    return kept_after(g, folder.metrics, folder.samples)


def kept_after(g, metrics: Path, samples: Path) -> dict:
    return {"metrics": [r for r in g.kept_metrics(g.read_jsonl(metrics)) if r["step"] > STOP_AFTER],
            "samples": [r for r in g.read_jsonl(samples) if r["step"] > STOP_AFTER]}


def write_stopped_run() -> None:
    """The run folder as a Ctrl-C after step 2 leaves it (recording only: it drives the loop
    through rlvr.orchestrate.run's internals, as its SIGINT handler does)."""
    from rlvr.orchestrate.run import RunInterrupted, new_run_folder, open_loop, run_loop

    shutil.rmtree(RUN, ignore_errors=True)
    c = config()
    folder = new_run_folder(c)
    loop = open_loop(c, folder, resume=False)
    step = loop.train_step

    def step_then_maybe_stop():
        metrics = step()
        loop.stop_requested = loop.step >= STOP_AFTER
        return metrics
    loop.train_step = step_then_maybe_stop
    try:
        run_loop(c, folder, loop, [], eval_full=False, fsdp=False)
        raise RuntimeError("the run did not stop after step 2")
    except RunInterrupted:
        pass
    finally:
        folder.release()
    folder.lock_file.unlink()  # holds the recording process's pid; the resume writes its own


def resumed_steps(tmp: Path) -> dict:
    """Resume a copy of the fixture in `tmp`; returns its steps 3-4 and a line on rows 1-2."""
    from rlvr.orchestrate import resume

    g = golden_runs()
    copy = Path(shutil.copytree(RUN, tmp / "resume_run"))
    before = g.kept_metrics(g.read_jsonl(copy / "metrics.jsonl"))
    with in_repo():
        folder = resume(copy).folder
    rows = g.kept_metrics(g.read_jsonl(folder.metrics))
    kept = kept_after(g, folder.metrics, folder.samples)
    kept["rows_1_2"] = g.first_difference(before, [r for r in rows if r["step"] <= STOP_AFTER])
    return kept


def check() -> int:
    problem = check_resume()
    print("ok     resume_run" if problem is None else f"DIFF   {problem}")
    return 1 if problem else 0


def check_resume() -> str | None:
    """None when resuming the fixture gives the recorded steps 3-4, else one line."""
    g = golden_runs()
    want = json.loads(EXPECTED.read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory(prefix="golden-resume-") as tmp:
        got = with_threads(g, lambda: resumed_steps(Path(tmp)))
    if got.pop("rows_1_2") is not None:
        return "resume_run: the resume rewrote steps 1-2 of metrics.jsonl"
    found = g.first_difference(g.comparable(want), g.comparable(got))
    return None if found is None else f"resume_run: {found}"


def with_threads(g, fn):
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(g.TORCH_THREADS)
    try:
        return fn()
    finally:
        torch.set_num_threads(threads)


def record() -> int:
    g = golden_runs()
    with in_repo():
        build_model()
        with tempfile.TemporaryDirectory(prefix="golden-resume-") as tmp:
            want = with_threads(g, lambda: uninterrupted_steps(Path(tmp)))
        with_threads(g, write_stopped_run)
    expected = {"commit": g.commit_of_checkout(), "torch_threads": g.TORCH_THREADS, "recipe": "demo.toml",
                "overrides": OVERRIDES, "stopped_after": STOP_AFTER, **want}
    EXPECTED.write_text(json.dumps(expected, indent=1) + "\n", encoding="utf-8")
    problem = check_resume()  # a fixture that does not resume to the uninterrupted run proves nothing
    size = sum(p.stat().st_size for d in (RUN, MODEL) for p in d.rglob("*") if p.is_file())
    print(f"record resume_run: steps {STOP_AFTER + 1}-{STEPS}, {size / 1e6:.2f} MB with its model"
          + ("" if problem is None else f"; BUT {problem}"))
    return 1 if problem else 0
