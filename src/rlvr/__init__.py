"""rlvr: reinforcement learning on verifiable rewards. The Python API (docs/python-api.md):

    rlvr.run(recipe, overrides=..., reward=callable, on_step=..., on_eval=...) -> RunResult
    rlvr.resume(run_dir, overrides=..., reward=...)                            -> RunResult
    rlvr.make_config(recipe, overrides)   a validated Config (recipe name, TOML file or Config)
    rlvr.load_config(path, ["section.key=value", ...])                       the CLI's reader
    rlvr.plan(config)                what the run will do, before anything loads (RunPlan)
    rlvr.export(checkpoint, out_dir)  a checkpoint as a plain Hugging Face model folder
    rlvr.eval_model(model, task=..., n=..., k=..., out=...)   `rlvr eval` -> EvalOutput (.results)
    rlvr.verifier(name, **options)   a built-in verifier: verifier(response=..., gold=...)

Each name is imported on first use, so that `import rlvr` (and the CLI's config checks, which
import rlvr.config) never pay for torch.
"""

from __future__ import annotations

import importlib

# name -> (module, attribute)
_API = {
    "run": ("rlvr.orchestrate.api", "run"),
    "resume": ("rlvr.orchestrate.api", "resume"),
    "make_config": ("rlvr.orchestrate.api", "make_config"),
    "verifier": ("rlvr.orchestrate.api", "verifier"),
    "load_config": ("rlvr.config.load", "load_config"),
    "dump_config": ("rlvr.config.load", "dump_config"),
    "plan": ("rlvr.orchestrate.plan", "plan_run"),
    "export": ("rlvr.orchestrate.export", "export_checkpoint"),
    "eval_model": ("rlvr.cli.eval_api", "eval_model"),
    "Config": ("rlvr.config.schema", "Config"),
    "RunResult": ("rlvr.orchestrate.run", "RunResult"),
    "Verdict": ("rlvr.rewards", "Verdict"),
}
__all__ = sorted(_API)


def __getattr__(name: str):
    if name not in _API:
        raise AttributeError(f"module 'rlvr' has no attribute {name!r}")
    module, attribute = _API[name]
    return getattr(importlib.import_module(module), attribute)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_API))
