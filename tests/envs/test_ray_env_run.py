"""An environment run on Ray rollout workers (orchestrate.backend = "ray"): the episodes' turns
are sampled by the workers from the trajectories' token ids (RayEngine.generate_ids), and what
the trainer recomputes on the stored trajectories is what the workers sampled with."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

ray = pytest.importorskip("ray", reason="Ray is not installed (optional extra `ray`)")

from rlvr.config import load_config  # noqa: E402
from rlvr.orchestrate import train  # noqa: E402
from rlvr.orchestrate.learner import Learner  # noqa: E402
from rlvr.train.batching import collate  # noqa: E402
from rlvr.train.logprobs import batch_logprobs  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
SMALL = ["sampling.prompts_per_step=2", "sampling.group_size=4", "log.progress=none", "checkpoint.every_minutes=0",
         "train.steps=2", "orchestrate.backend=ray", "orchestrate.rollout_workers=2"]


@pytest.fixture(scope="module")
def cluster():
    """The running cluster (.ci/run starts one), else a 2-CPU local one for this module."""
    started = not ray.is_initialized()
    if started:
        try:
            ray.init(address="auto", log_to_driver=False)
        except ConnectionError:
            ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    if started:
        ray.shutdown()


@pytest.fixture
def replayed(monkeypatch):
    """(rollouts, the trainer's log-probs for them) of every step, taken before the update,
    while the trainer's model still holds the weights the workers sampled with."""
    seen, learn = [], Learner.learn

    def recording(self, groups, steps_done):
        rollouts = [s.rollout for g in groups for s in g]
        n = len(rollouts)
        batch = collate(rollouts, torch.zeros(n), torch.zeros(n, dtype=torch.long), self.models.pad_id)
        with torch.no_grad():
            seen.append((rollouts, batch_logprobs(self.parts.model, batch, self.config.sampling.temperature)))
        return learn(self, groups, steps_done)

    monkeypatch.setattr(Learner, "learn", recording)
    return seen


@pytest.mark.slow  # a Ray cluster and two actors loading the model: tens of seconds on 2 cores
def test_episodes_on_ray_workers_keep_their_tokens_and_logprobs(cluster, tmp_path, replayed):
    config = load_config(REPO / "recipes" / "env_guess_number.toml",
                         [f"run.output_dir={tmp_path}", "run.name=ray_env", *SMALL])
    rows = train(config).folder.read_metrics()
    assert [r["step"] for r in rows] == [1, 2] and all(r["env/episodes"] == 8.0 for r in rows)
    assert len(replayed) == 2
    observed = 0
    for step, (rollouts, trainer) in enumerate(replayed):
        # the trainer's weights after `step` updates reached both workers before they sampled
        assert {r.policy_version for r in rollouts} == {step}
        for i, r in enumerate(rollouts):
            mask = torch.tensor(r.loss_mask, dtype=torch.bool)
            sampled, recomputed = torch.tensor(r.logprobs), trainer[i, :len(r.completion_ids)]
            torch.testing.assert_close(recomputed[mask], sampled[mask], atol=1e-4, rtol=0)
            assert torch.all(sampled[~mask] == 0)  # observation tokens: not sampled, no log-prob
            observed += int((~mask).sum())
    assert observed > 0  # some episode got feedback: multi-turn, or the test says little
