"""The Ray engine's stop ids are computed once in the driver and reach every rollout worker: a
worker loads its tokenizer from the model folder, which lacks a template `model.chat_template`
gave as a file. Run through an in-process stand-in for Ray (the driver's code path, the worker
class itself), and once on a real local Ray cluster when one can start (slow)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from rlvr.engines import SamplingParams
from rlvr.engines import ray_engine
from rlvr.engines.loading import load_model, load_tokenizer
from rlvr.engines.ray_engine import RayEngine
from rlvr.engines.stop_tokens import folder_stop_ids as driver_stop_ids, stop_token_ids

TINY = Path(__file__).resolve().parents[2] / "models" / "tiny-arith"
# A template that closes each turn with <|im_start|> (not the folder's <|im_end|>).
OTHER_TEMPLATE = ("{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}<|im_start|>\n{% endfor %}"
                  "{% if add_generation_prompt %}assistant: {% endif %}")


class _Ref:
    def __init__(self, value):
        self.value = value


class _Actor:
    """An actor handle whose methods run at once, in this process."""

    def __init__(self, cls, args):
        self.obj = cls(*args)

    def __getattr__(self, name):
        method = getattr(self.obj, name)
        return SimpleNamespace(remote=lambda *a, **k: _Ref(method(*a, **k)))


class InProcessRay:
    """The part of Ray's API RayEngine uses, run synchronously (no cluster, no pickling)."""

    exceptions = SimpleNamespace(RayActorError=type("RayActorError", (Exception,), {}))

    def is_initialized(self):
        return True

    def remote(self, **options):
        return lambda cls: SimpleNamespace(remote=lambda *args: _Actor(cls, args))

    def wait(self, refs, num_returns, timeout):
        return refs[:num_returns], refs[num_returns:]

    def get(self, ref):
        return ref.value

    def put(self, value):
        return value

    def kill(self, actor, no_restart=True):
        pass


@pytest.fixture
def fake_ray(monkeypatch):
    monkeypatch.setattr(ray_engine, "_ray", InProcessRay)


def worker_stop_ids(engine: RayEngine) -> list[tuple[int, ...]]:
    return [w.obj.engine.stop_ids for w in engine.workers]


@pytest.mark.parametrize("folder", ["tiny", "qwen2", "llama"])
def test_the_driver_reads_the_stop_ids_a_loaded_model_gives(bpe_models, folder):
    path = TINY if folder == "tiny" else bpe_models[folder]
    tok = load_tokenizer(path)
    assert driver_stop_ids(tok, str(path)) == stop_token_ids(tok, load_model(path))


def test_a_template_file_reaches_the_workers_stop_rule(fake_ray, bpe_models, bpe_tokenizer):
    folder = bpe_models["qwen2"]
    tok = load_tokenizer(folder)
    tok.chat_template = OTHER_TEMPLATE  # what with_chat_template does with model.chat_template = FILE
    im_start, im_end = (bpe_tokenizer.convert_tokens_to_ids(t) for t in ("<|im_start|>", "<|im_end|>"))
    engine = RayEngine(str(folder), tok, workers=2)
    assert engine.stop_ids == (tok.eos_token_id, im_start)
    assert worker_stop_ids(engine) == [(tok.eos_token_id, im_start)] * 2  # not the folder's <|im_end|>
    assert im_end in driver_stop_ids(load_tokenizer(folder), str(folder))  # what a worker's own reading gives


def test_the_workers_stop_on_the_drivers_ids(fake_ray):
    tok = load_tokenizer(TINY)
    params = SamplingParams(max_new_tokens=6, temperature=1.0)
    everything = tuple(range(load_model(TINY).config.vocab_size))  # every token ends the completion
    stopped = RayEngine(str(TINY), tok, workers=2, stop_ids=everything).generate(["12+34=", "5+6="], 2, params)
    assert all(len(r.completion_ids) == 1 and r.finish_reason == "stop" for g in stopped for r in g)
    free = RayEngine(str(TINY), tok, workers=2).generate(["12+34=", "5+6="], 2, params)
    assert max(len(r.completion_ids) for g in free for r in g) > 1


@pytest.mark.slow
def test_on_a_real_local_cluster(bpe_models):
    ray = pytest.importorskip("ray", reason="Ray is not installed (optional extra `ray`)")
    try:
        ray.init(address="local", num_cpus=1, log_to_driver=False, include_dashboard=False)
    except Exception as e:  # noqa: BLE001 - any start failure is a reason to skip, named
        pytest.skip(f"Ray cannot start here: {type(e).__name__}: {e}")
    try:
        tok = load_tokenizer(bpe_models["qwen2"])
        tok.chat_template = OTHER_TEMPLATE
        engine = RayEngine(str(bpe_models["qwen2"]), tok, workers=1)
        (group,) = engine.generate(["user: hi<|im_start|>\nassistant: "], 1, SamplingParams(max_new_tokens=3))
        assert len(group) == 1
        worker_ids = ray.get(engine.workers[0].stop_ids.remote())
        assert worker_ids == engine.stop_ids == (tok.eos_token_id, tok.convert_tokens_to_ids("<|im_start|>"))
    finally:
        ray.shutdown()
