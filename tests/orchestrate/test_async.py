"""The asynchronous loop: staleness 0 is the synchronous run; staleness k is bounded by k."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from rlvr.config import load_config
from rlvr.orchestrate import train

REPO = Path(__file__).resolve().parents[2]
SMALL = ["sampling.prompts_per_step=4", "sampling.group_size=4", "eval.every=3", "eval.size=16",
         "log.progress=none", "train.steps=6", "train.lr=1e-4"]


def run(tmp_path, name, *extra):
    config = load_config(REPO / "recipes" / "grpo.toml", [f"run.output_dir={tmp_path}", f"run.name={name}", *SMALL, *extra])
    return train(config).folder.read_metrics()


def test_async_with_staleness_0_equals_sync_bit_for_bit(tmp_path):
    sync = run(tmp_path, "sync")
    async0 = run(tmp_path, "async0", "orchestrate.mode=async")
    keys = ["reward/mean", "loss/policy", "train/grad_norm", "policy/entropy", "response/length_mean", "eval/accuracy"]
    assert [[m.get(k) for k in keys] for m in sync] == [[m.get(k) for k in keys] for m in async0]
    assert all(m["async/staleness"] == 0 for m in async0)


@pytest.mark.parametrize("k", [1, 2])
def test_staleness_never_exceeds_the_bound(tmp_path, k):
    rows = run(tmp_path, f"k{k}", "orchestrate.mode=async", f"orchestrate.max_staleness={k}")
    assert [m["step"] for m in rows] == [1, 2, 3, 4, 5, 6]
    staleness = [m["async/staleness"] for m in rows]
    assert max(staleness) <= k and staleness[0] == 0


def test_async_resume_continues(tmp_path):
    config = load_config(REPO / "recipes" / "grpo.toml", [f"run.output_dir={tmp_path}", "run.name=a", *SMALL,
                                                          "orchestrate.mode=async", "orchestrate.max_staleness=2",
                                                          "train.steps=3"])
    result = train(config)
    from rlvr.orchestrate import resume

    resume(result.folder.path, ["train.steps=6"])
    assert [m["step"] for m in result.folder.read_metrics()] == [1, 2, 3, 4, 5, 6]


def test_inflight_updates_keep_the_bound_and_report_token_staleness(tmp_path, monkeypatch):
    # Each decode step is slowed to 10 ms, so a 40-token generation (0.4 s) outlasts a training
    # step by far and new weights arrive while the producer is mid-generation, whatever the load.
    from rlvr.engines.hf import HFEngine

    take = HFEngine._take_inflight_weights

    def slow_take(self):
        time.sleep(0.01)
        take(self)
    monkeypatch.setattr(HFEngine, "_take_inflight_weights", slow_take)
    long = ["orchestrate.mode=async", "orchestrate.max_staleness=1", "sampling.min_new_tokens=40",
            "sampling.max_new_tokens=40"]
    rows = run(tmp_path, "inflight", *long, "orchestrate.inflight_updates=true")
    plain = run(tmp_path, "plain", *long)
    assert [m["step"] for m in rows] == [1, 2, 3, 4, 5, 6]
    assert max(m["async/inflight_mixed_frac"] for m in rows) > 0  # some samples did change weights
    assert all(m["async/inflight_mixed_frac"] == 0 for m in plain)
    assert min(m["async/token_staleness_mean"] - m["async/staleness_mean"] for m in rows) < 0
    for m in rows:
        assert m["async/staleness"] <= 1
        # tokens are never older than their sample's first token
        assert 0 <= m["async/token_staleness_mean"] <= m["async/staleness_mean"] <= m["async/staleness"]
        assert 0 <= m["async/inflight_mixed_frac"] <= 1


@pytest.mark.parametrize("extra, message", [
    (["orchestrate.inflight_updates=true"], "needs orchestrate.mode = 'async'"),
    (["orchestrate.inflight_updates=true", "orchestrate.mode=async", "orchestrate.backend=ray"], "in-process engine"),
    (["orchestrate.inflight_updates=true", "orchestrate.mode=async", "model.engine=vllm"], "needs model.engine = 'hf'"),
    (["reward.verifier=probability", "orchestrate.mode=async", "orchestrate.backend=ray"], "probability' in async mode"),
])
def test_inflight_updates_incoherent_settings(tmp_path, extra, message):
    from rlvr.errors import ConfigError

    with pytest.raises(ConfigError, match=message):
        load_config(REPO / "recipes" / "grpo.toml", [f"run.output_dir={tmp_path}", *extra])
