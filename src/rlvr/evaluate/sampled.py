"""pass@k during training: n sampled completions per held-out prompt, with a fixed seed."""

from __future__ import annotations

from collections.abc import Callable

from rlvr.engines.base import Engine, SamplingParams
from rlvr.evaluate.passk import pass_at_k
from rlvr.evaluate.groups import verdicts_of
from rlvr.rewards.calling import score_of
from rlvr.rewards.concurrent import SERIAL, Concurrency
from rlvr.types import Sample


def sampled_pass_at_k(engine: Engine, reward_fn: Callable, stop: tuple[str, ...], test: list[Sample],
                      eval_section, seed: int, how: Concurrency = SERIAL) -> dict[str, float]:
    """`eval/pass@k` for each k of `eval.k`, the unbiased estimator averaged over prompts.

    The engine's generator is seeded with `seed + 1` for the evaluation and then put back, so
    every evaluation of a run draws with the same random numbers (a fairer comparison between
    checkpoints) and training samples exactly as it would have without it. `reward_fn` scores
    a sample's completions (a full pass, 1.0, counts as correct), `how.workers` calls at once;
    `stop`: the run's stop strings.
    """
    e = eval_section
    params = SamplingParams(max_new_tokens=e.max_new_tokens, temperature=e.temperature,
                            stop=stop)
    generator = engine.generator
    saved = generator.get_state()
    generator.manual_seed(seed + 1)
    try:
        groups = engine.generate([s.prompt for s in test], e.samples, params)
    finally:
        generator.set_state(saved)
    scores = [score_of(v) >= 1.0 for v in verdicts_of(test, groups, reward_fn, how)]
    correct = [sum(scores[i * e.samples:(i + 1) * e.samples]) for i in range(len(test))]
    return {f"eval/pass@{k}": sum(pass_at_k(e.samples, c, k) for c in correct) / len(test) for k in e.k}
