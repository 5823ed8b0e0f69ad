"""The cross-field rules of [env] (multi-turn environments, docs/environments.md): what an
environment run does not support yet, each named with the key at fault. Part of
config/coherence.py, which runs them at load; split off only for length."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from rlvr.config.coherence_run import SEQUENCE_RATIOS, advantage_varies_per_token

if TYPE_CHECKING:
    from rlvr.config.schema import Config

# env.kind -> the task kind it plays, where it plays only one.
ENV_TASK = {"guess_number": "guess_number", "textarena": "textarena", "repo": "repo"}


def env_incoherences(c: Config) -> Iterator[str]:
    e = c.env
    if c.task.kind == "textarena" and e.kind != "textarena":
        yield f"task.kind = 'textarena' rows are game seeds: they need env.kind = 'textarena', not {e.kind!r}"
    if c.task.kind == "repo" and e.kind != "repo":
        yield f"task.kind = 'repo' rows are repositories to fix: they need env.kind = 'repo', not {e.kind!r}"
    if e.kind == "none":
        return
    here = f"env.kind = {e.kind!r}"
    if e.kind == "single_turn" and e.curriculum != "none":
        yield "env.curriculum = 'failures' is played by the episode source; env.kind = 'single_turn' has its own rows"
    if e.kind == "single_turn":  # generated and scored by RolloutSource's code (orchestrate/one_turn_source.py):
        yield from env_budget_incoherences(c)  # any engine, producer and sampling option a single-turn run takes
        yield from credit_incoherences(c, here)
        return
    # Every engine samples from token ids (Engine.generate_ids): HFEngine and the Ray workers'
    # are tested here; model.engine = 'vllm' is allowed as for single-turn runs, under the same
    # rules (config/coherence_run.py vllm_incoherences) and, like them, not run on a GPU yet.
    if (want := ENV_TASK.get(e.kind)) is not None and c.task.kind != want:
        yield f"{here} plays task.kind = {want!r} games, not task.kind = {c.task.kind!r}"
    if e.kind == "python_tool" and c.task.kind == "guess_number":
        yield "env.kind = 'python_tool' answers tasks with a gold answer to verify; task.kind = 'guess_number' is a game"
    if e.kind == "sql" and c.task.kind not in ("jsonl", "datasets"):
        yield (f"env.kind = 'sql' needs tasks whose gold answer is a SQL query (task.kind = 'jsonl' or "
               f"'datasets'), not task.kind = {c.task.kind!r}")
    yield from env_sampling_incoherences(c, here)
    if c.eval.size > 0 and c.eval.max_new_tokens >= e.max_total_tokens:
        yield (f"eval.max_new_tokens ({c.eval.max_new_tokens}, one turn of an evaluation episode) must be below "
               f"env.max_total_tokens ({e.max_total_tokens}, the whole trajectory)")
    yield from credit_incoherences(c, here)


def credit_incoherences(c: Config, here: str) -> Iterator[str]:
    """env.credit (rlvr.envs.credit): the trajectory's advantage comes from algo.advantage, a
    per-turn one from the turn returns with algo.baseline and algo.scale."""
    e, a = c.env, c.algo
    if e.credit == "trajectory":
        if advantage_varies_per_token(a):
            yield (f"{here} with per-token advantages (algo.advantage = {a.advantage!r}): the critic and token "
                   "returns do not know the turns of a trajectory; use algo.advantage = 'group', and "
                   "env.credit = 'per_turn' for credit per turn")
        if e.turn_discount != 1.0:
            yield (f"env.turn_discount = {e.turn_discount} is read only by env.credit = 'per_turn' "
                   "(env.credit = 'trajectory' gives one advantage per episode)")
        return
    if a.advantage != "group":
        yield (f"env.credit = 'per_turn' computes the advantages itself (turn returns, algo.baseline and "
               f"algo.scale per turn index); algo.advantage = {a.advantage!r} would be ignored: set 'group'")
    if a.baseline == "length_weighted":
        yield ("env.credit = 'per_turn' with algo.baseline = 'length_weighted': a turn's return has no "
               "completion length to weight by; use 'group_mean' or 'rloo'")
    if a.kl != "none" and a.kl_placement == "reward":
        yield ("env.credit = 'per_turn' with algo.kl_placement = 'reward': the turn returns carry no KL "
               "penalty; put the KL in the loss (algo.kl_placement = 'loss')")
    if a.surrogate == "gmpo":
        yield ("env.credit = 'per_turn' gives advantages that vary along a trajectory; algo.surrogate = 'gmpo' "
               "needs one advantage per row")
    if a.ratio_level in SEQUENCE_RATIOS:
        yield (f"env.credit = 'per_turn' with algo.ratio_level = {a.ratio_level!r}: the sequence ratio spreads "
               "every token's gradient over the row and loses the per-turn credit; use 'token' or 'sequence_token'")


def env_sampling_incoherences(c: Config, here: str) -> Iterator[str]:
    """Dynamic sampling and the overlong penalty act on single-turn rollouts; the episode source
    plays sampling.curriculum itself (a task's key: its prompt and gold, orchestrate/episode_source.py)."""
    s = c.sampling
    if s.zero_variance != "keep":
        yield f"{here} with sampling.zero_variance = {s.zero_variance!r}: the episode source keeps every group"
    if s.overlong_cache is not None:
        yield (f"{here} with sampling.overlong_cache: the overlong penalty reads a completion's length, which "
               "in an episode includes the observations")
    yield from env_budget_incoherences(c)


def env_budget_incoherences(c: Config) -> Iterator[str]:
    s = c.sampling
    if s.max_new_tokens >= c.env.max_total_tokens:
        yield (f"sampling.max_new_tokens ({s.max_new_tokens}, one turn) must be below env.max_total_tokens "
               f"({c.env.max_total_tokens}, the whole trajectory)")
