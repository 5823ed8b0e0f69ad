"""`rlvr eval` and `rlvr serve` build their engine from the recipe's plan, through the same
`model.engine` choice as training (orchestrate/model_parts.py, engine_choice.SERVING_ENGINES):
an engine chosen in a recipe is the one these commands generate with."""

from __future__ import annotations

from pathlib import Path

from rlvr.cli import serve_command
from rlvr.cli.main import main
from rlvr.config import dump_config, load_config
from rlvr.orchestrate import engine_choice
from rlvr.serve.limits import ServeLimits

REPO = Path(__file__).resolve().parents[2]
TINY = REPO / "models" / "tiny-arith"


def engine_recorder(monkeypatch) -> list:
    """Makes "vllm" build the in-process engine, recording the config each build gets (no GPU here)."""
    calls, in_process = [], engine_choice.SERVING_ENGINES["hf"]

    def built(config, model, tokenizer, path):
        engine = in_process(config, model, tokenizer, path)
        calls.append((config.model.engine, config.run.seed, Path(path), engine))
        return engine

    monkeypatch.setitem(engine_choice.SERVING_ENGINES, "vllm", built)
    return calls


def vllm_recipe(tmp_path: Path) -> Path:
    recipe = tmp_path / "vllm.toml"
    recipe.write_text(dump_config(load_config(REPO / "recipes" / "demo.toml", ["model.engine=vllm"])))
    return recipe


def test_the_recipes_engine_and_the_seed_reach_eval(tmp_path, monkeypatch, capsys):
    calls = engine_recorder(monkeypatch)
    argv = ["eval", str(TINY), "--recipe", str(vllm_recipe(tmp_path)), "--n", "2", "--k", "1,2", "--limit", "3",
            "--max-new-tokens", "4", "--seed", "7", "--out", str(tmp_path / "out")]
    assert main(argv) == 0, capsys.readouterr().err
    assert [c[:3] for c in calls] == [("vllm", 7, TINY)]


def test_the_recipes_engine_reaches_serve(tmp_path, monkeypatch):
    calls = engine_recorder(monkeypatch)
    services = []
    monkeypatch.setattr(serve_command, "serve_with", lambda args, load: services.append(load(ServeLimits())) or 0)
    ap = __import__("argparse").ArgumentParser()
    serve_command.add_arguments(ap)
    args = ap.parse_args([str(TINY), "--recipe", str(vllm_recipe(tmp_path)), "--seed", "3", "--name", "t"])
    assert serve_command.run_serve(args) == 0
    assert [c[:3] for c in calls] == [("vllm", 3, TINY)]
    assert services[0].engine is calls[0][3] and services[0].name == "t"
