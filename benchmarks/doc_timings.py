"""The times the docs quote for their own examples, measured by running those examples.

    python benchmarks/doc_timings.py [--only NAME,...] [--long] [--rounds N] [--list] [--out FILE.json]

Each figure is one of the docs' examples, taken from the page itself (its code blocks, its
`cat > FILE <<'EOF'` files and its command lines), run in a fresh folder that links the
checkout's `models/` and `recipes/`, with `/tmp/` in a command moved into that folder: nothing
is written into the checkout. A command line `rlvr ...` runs as `python -m rlvr.cli.main ...`
with the checkout's `src` first on `PYTHONPATH`. Setup steps (a model the page builds in its
step 1, a file its step 2 writes) run untimed; each timed step prints its wall seconds, its CPU
seconds (user + system of its processes) and the load average before and after. `--long` adds
the examples that take minutes (a training run, a model build, the mutation run).

The page quotes a figure in the form "N s wall (`python benchmarks/doc_timings.py --only
NAME`, date, load)"; tests/benchmarks/test_doc_timings.py checks that every figure here still
finds its example on its page and that every page names only figures that exist.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

REPO = Path(__file__).resolve().parents[1]
RLVR = (sys.executable, "-m", "rlvr.cli.main")
PROBE = "import time, importlib, sys; t = time.perf_counter(); importlib.import_module(sys.argv[1]); print(time.perf_counter() - t)"


@dataclass(frozen=True)
class Step:
    """One command of an example; `timed=False` for its setup."""

    argv: tuple[str, ...]
    label: str
    timed: bool = True
    env: tuple[tuple[str, str], ...] = ()
    cwd: Path | None = None  # None: the example's folder


@dataclass(frozen=True)
class Figure:
    """An example a page times: `prepare(folder)` writes the page's files and returns its steps."""

    name: str
    page: str
    prepare: Callable[[Path], list[Step]]
    long: bool = False
    commands: tuple[str, ...] = field(default=())  # command lines that must be on the page


def page_text(page: str) -> str:
    return (REPO / page).read_text(encoding="utf-8")


def fenced(page: str, lang: str) -> list[str]:
    """The page's code blocks of one language (`` ```python `` ...), in order."""
    return re.findall(rf"```{lang}\n(.*?)```", page_text(page), re.S)


def heredoc(page: str, path: str) -> str:
    """The body of the page's `cat > PATH <<'EOF'` file."""
    found = re.search(rf"cat > {re.escape(path)} <<'EOF'\n(.*?)\nEOF", page_text(page), re.S)
    if found is None:
        raise LookupError(f"{page}: no `cat > {path} <<'EOF'` block")
    return found.group(1) + "\n"


def command_on_page(page: str, start: str) -> str:
    """The page's command line that starts with `start` (a `$ ` prompt and `\\` continuations
    taken away), so that the figure runs what the reader reads."""
    text = page_text(page).replace("\\\n", " ")
    for line in text.splitlines():
        line = line.strip().removeprefix("$ ")
        if line.startswith(start):
            return re.sub(r"\s+", " ", line.split("   #")[0]).strip()
    inline = re.search(rf"`({re.escape(start)}[^`]*)`", text)  # a command quoted in a sentence
    if inline:
        return re.sub(r"\s+", " ", inline.group(1))
    raise LookupError(f"{page}: no command line starting {start!r}")


def shell_step(line: str, folder: Path, label: str | None = None, timed: bool = True) -> Step:
    """A page's command line as a Step: leading NAME=value words become the environment (a
    relative PYTHONPATH is the folder), `rlvr` becomes this interpreter's `-m rlvr.cli.main`,
    `python` this interpreter, and `/tmp/` the folder."""
    words = shlex.split(line.replace("/tmp/", f"{folder}/"))
    env = []
    while words and re.fullmatch(r"[A-Z_]+=.*", words[0]):
        name, value = words.pop(0).split("=", 1)
        env.append((name, str((folder / value).resolve()) if name == "PYTHONPATH" else value))
    head = {"rlvr": RLVR, "python": (sys.executable,)}.get(words[0], (words[0],))
    return Step(head + tuple(words[1:]), label or line, timed, tuple(env))


def link_checkout(folder: Path) -> None:
    for name in ("models", "recipes"):
        (folder / name).symlink_to(REPO / name, target_is_directory=True)


def run_step(step: Step, folder: Path) -> dict:
    env = dict(os.environ)
    extra = dict(step.env)
    paths = [extra.pop("PYTHONPATH", None), str(REPO / "src"), str(folder), env.get("PYTHONPATH")]
    env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    env.update(extra)
    load0 = os.getloadavg()[0]
    cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run(step.argv, cwd=step.cwd or folder, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
    row = {"step": step.label, "wall_s": round(wall, 3), "cpu_s": round(cpu, 3),
           "load": [round(load0, 2), round(os.getloadavg()[0], 2)], "rc": out.returncode,
           "stdout_tail": out.stdout.splitlines()[-3:], "stdout": out.stdout}
    if out.returncode != 0:
        raise RuntimeError(f"{step.label!r} exited {out.returncode}:\n{out.stdout[-2000:]}\n{out.stderr[-3000:]}")
    return row


def measure(figure: Figure) -> list[dict]:
    with tempfile.TemporaryDirectory(prefix=f"doc-{figure.name}-") as tmp:
        folder = Path(tmp)
        link_checkout(folder)
        rows = []
        for step in figure.prepare(folder):
            row = run_step(step, folder)
            if step.timed:
                rows.append(row)
        return rows


# --- the examples -------------------------------------------------------------------------------

def _python_block(page: str, index: int, folder: Path) -> list[Step]:
    (folder / "example.py").write_text(fenced(page, "python")[index])
    return [Step((sys.executable, "example.py"), "python example.py")]


def _byo(folder: Path) -> list[Step]:
    page = "docs/bring-your-own.md"
    make_data, my_reward = fenced(page, "python")[:2]
    (folder / "make_data.py").write_text(make_data)
    (folder / "my_reward.py").write_text(my_reward)
    (folder / "byo.toml").write_text(fenced(page, "toml")[0])
    return [shell_step(f"python {REPO}/scripts/make_chat_model.py chat-model", folder, timed=False),
            shell_step("python make_data.py", folder, timed=False),
            *(shell_step(command_on_page(page, c), folder) for c in BYO)]


BYO = ("PYTHONPATH=. rlvr train byo.toml", "PYTHONPATH=. rlvr train --resume runs/byo")
EVAL = "docs/evaluation.md"


def _files_then(page: str, files: tuple[str, ...], commands: tuple[str, ...]) -> Callable[[Path], list[Step]]:
    """Write the page's heredoc files, then run its command lines."""

    def prepare(folder: Path) -> list[Step]:
        for name in files:
            target = folder / name.replace("/tmp/", "")
            target.write_text(heredoc(page, name))
        return [shell_step(command_on_page(page, c), folder) for c in commands]

    return prepare


def _rubric(folder: Path) -> list[Step]:
    rubric = next(b for b in fenced(EVAL, "") if b.startswith('[reward]\nverifier = "rubric"'))
    (folder / "rubric.toml").write_text(rubric)
    return [shell_step(command_on_page(EVAL, c), folder) for c in RUBRIC]


RUBRIC = ("rlvr eval-judge --judge function:rlvr.evaluate.baseline_judges:arithmetic_check",
          "rlvr eval-judge --judge rubric:rubric.toml")


def _imports(*modules: str) -> Callable[[Path], list[Step]]:
    """Each module's import in a fresh interpreter (its start-up not counted in `stdout_tail`)."""
    return lambda folder: [Step((sys.executable, "-c", PROBE, m), f"import {m}") for m in modules]


def _judges(folder: Path) -> list[Step]:
    """The page's two model-free judges (the second named only in its prose), then the rubric."""
    arithmetic = command_on_page(EVAL, RUBRIC[0])
    return [shell_step(arithmetic, folder), shell_step(arithmetic.replace("arithmetic_check", "longer_is_better"), folder),
            *_rubric(folder)[1:]]


def _demo_before_after(folder: Path) -> list[Step]:
    """The worked example: the demo recipe trained, both models evaluated, then the same
    evaluation with the page's CoT judge added to it."""
    train, evaluate = (command_on_page(EVAL, c) for c in DEMO)
    cot = command_on_page(EVAL, "--cot-judge function:rlvr.evaluate.baseline_judges:arithmetic_check --cot-threshold")
    return [shell_step(train, folder), shell_step(evaluate, folder),
            shell_step(f"{evaluate.replace('/tmp/eval-demo', '/tmp/eval-demo-cot')} {cot}", folder,
                       label="the worked example's eval + --cot-judge")]


DEMO = ("rlvr train recipes/demo.toml --set run.output_dir=/tmp/x", "rlvr eval models/tiny-arith --n 16 --k 1,4,16")


def _in_checkout(*lines: str) -> Callable[[Path], list[Step]]:
    """Commands that read the checkout (tests, scripts that write nothing into it) run there."""
    return lambda folder: [Step(shell_step(line, folder).argv, line, cwd=REPO) for line in lines]


ENV_DEMO = "rlvr demo --env python --set run.seed=0 --set run.output_dir=/tmp/runs"
PYTEST = "python -m pytest -q -p no:cacheprovider"

FIGURES = [
    Figure("python-api-run", "docs/python-api.md", lambda f: _python_block("docs/python-api.md", 0, f)),
    Figure("python-api-eval", "docs/python-api.md", lambda f: _python_block("docs/python-api.md", 1, f)),
    Figure("byo-train-resume", "docs/bring-your-own.md", _byo, commands=BYO),
    Figure("eval-samples", EVAL, _files_then(EVAL, ("my_samples.jsonl",), ("rlvr eval --samples my_samples.jsonl",)),
           commands=("rlvr eval --samples my_samples.jsonl",)),
    Figure("eval-cot", EVAL, _files_then(EVAL, ("/tmp/cot_samples.jsonl",), ("rlvr eval --samples /tmp/cot_samples.jsonl",)),
           commands=("rlvr eval --samples /tmp/cot_samples.jsonl",)),
    Figure("eval-judge", EVAL, _judges, commands=RUBRIC),
    Figure("eval-demo", EVAL, _demo_before_after, long=True, commands=DEMO),
    Figure("audit-code", "docs/reward-hacks.md", _in_checkout("rlvr audit code")),
    Figure("measure-envs", "docs/environments-results.md", _in_checkout("python scripts/measure_envs.py")),
    Figure("golden-guess-number", "docs/environments-results.md",
           _in_checkout("python scripts/golden_runs.py check env_guess_number")),
    Figure("textarena-tests", "docs/environments-results.md",
           _in_checkout(f"{PYTEST} tests/envs/test_textarena_env.py", f"{PYTEST} tests/envs/test_arena_model.py")),
    Figure("env-python-demo", "docs/environments-results.md", lambda f: [shell_step(ENV_DEMO, f)], long=True),
    Figure("make-repo-model", "docs/env-repo.md",
           lambda f: [shell_step(f"python {REPO}/scripts/make_repo_model.py --out /tmp/tiny-repo", f)], long=True),
    Figure("mutate", "docs/composition.md", _in_checkout("python scripts/mutate.py"), long=True),
    Figure("import-openenv", "docs/env-openenv.md", _imports("gradio", "openenv.core")),
    Figure("import-reasoning-gym", "docs/tasks.md", _imports("reasoning_gym")),
]
BY_NAME = {f.name: f for f in FIGURES}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", help="comma-separated figure names (--list shows them)")
    ap.add_argument("--long", action="store_true", help="include the examples that take minutes")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    if args.list:
        for f in FIGURES:
            print(f"{f.name:24} {f.page}{'  (long)' if f.long else ''}")
        return
    names = args.only.split(",") if args.only else [f.name for f in FIGURES if args.long or not f.long]
    unknown = [n for n in names if n not in BY_NAME]
    if unknown:
        sys.exit(f"unknown figure(s) {', '.join(unknown)}; --list shows them")
    results = {}
    for round_ in range(args.rounds):
        for name in names:
            for row in measure(BY_NAME[name]):
                results.setdefault(name, []).append({**row, "round": round_})
                print(f"{name:22} {row['step'][:60]:60} {row['wall_s']:8.2f} s wall {row['cpu_s']:8.2f} s CPU"
                      f"  load {row['load'][0]} -> {row['load'][1]}  {' | '.join(row['stdout_tail'])[:80]}", flush=True)
    if args.out:
        args.out.write_text(json.dumps({"commit": _commit(), "figures": results}, indent=1))


def _commit() -> str:
    out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True)
    return out.stdout.strip()


if __name__ == "__main__":
    main()
