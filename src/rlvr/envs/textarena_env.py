"""A single-player textarena game as an rlvr `Env` (extra `envs`: textarena 0.7.4, MIT).

textarena's contract is `reset(num_players, seed)`, then `get_observation() -> (player,
messages)` and `step(action) -> (done, info)` until done, then `close() -> (rewards,
game_info)`. This adapter maps it onto rlvr's:

    reset(sample, seed)  the game seed is the task's (task.kind = "textarena": the sample's
                         answer), so the G episodes of a task play one game; without one,
                         the episode's seed. Returns the game's first messages.
    step(action)         the new messages since the last turn, the policy's own action left
                         out (the trajectory already holds its tokens): textarena's LLM
                         wrappers re-send the whole history each turn, which a token-exact
                         trajectory must not. Reward 0 until done; then the game's reward
                         (textarena's rewards[0]: 1 for a win, partial credit or -1 by game),
                         stop reason "won" (reward >= 1), "invalid_move" (the game ended on
                         its second invalid move in a row) or "game_over".

Only games checked to run offline are accepted (`OFFLINE_GAMES`, by entry point, so every id
variant of a checked game is): textarena's word games download nltk word lists when their
module is imported, which must not happen at run time, and multi-player games need opponents
that an rlvr episode does not have. The id's wrappers are not applied (the messages are
rendered here); `bracket_actions` keeps the one that matters to a small policy, textarena's
ActionFormattingWrapper ("5" is sent as "[5]").

textarena seeds and draws from the process-wide `random` module. Episodes step in threads, so
every call into a game runs under one lock with the game's own `random` state swapped in and
the process's swapped back after: a game's draws depend only on its seed, and the rest of the
process never sees textarena's reseeding.
"""

from __future__ import annotations

import importlib
import random
import threading
from collections.abc import Callable
from contextlib import contextmanager

from rlvr.envs.base import Env, StepResult
from rlvr.errors import ConfigError
from rlvr.types import Sample

# Entry points of the games checked on 2026-12-01 with the network cut (unshare -rn): each
# imports, resets and plays with no download, single-player, its game fixed by the seed
# (tests/envs/test_textarena_env.py replays each).
OFFLINE_GAMES = {
    "textarena.envs.GuessTheNumber.env:GuessTheNumberEnv": "GuessTheNumber-v0",
    "textarena.envs.TowerOfHanoi.env:TowerOfHanoiEnv": "TowerOfHanoi-v0",
    "textarena.envs.Mastermind.env:MastermindEnv": "Mastermind-v0",
    "textarena.envs.FrozenLake.env:FrozenLakeEnv": "FrozenLake-v0",
}
_LOCK = threading.Lock()


def _textarena():
    try:
        import textarena
    except ImportError:
        raise ConfigError("env.kind = 'textarena' needs textarena: pip install 'rlvr[envs]' "
                          "(textarena==0.7.4)") from None
    return textarena


def game_class(game: str) -> tuple[type, dict]:
    """The game class and registered keyword arguments of textarena id `game`; a clear error
    for an unknown id and for one not checked to run offline single-player."""
    from difflib import get_close_matches

    registry = _textarena().envs.registration.ENV_REGISTRY
    if game not in registry:
        near = get_close_matches(game, list(registry), n=1)
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        raise ConfigError(f"env.game = {game!r} is not a textarena game{hint}")
    spec = registry[game]
    if spec.entry_point not in OFFLINE_GAMES:
        checked = ", ".join(sorted(OFFLINE_GAMES.values()))
        raise ConfigError(f"env.game = {game!r} is not a textarena game checked to run offline and single-player "
                          f"here (checked: {checked} and their variants): word games download nltk data at "
                          "import, multi-player games need opponents (docs/environments.md)")
    module, name = spec.entry_point.split(":")
    return getattr(importlib.import_module(module), name), dict(spec.kwargs)


@contextmanager
def _own_random(state: list):
    """Run with `state[0]` as the `random` module's state (None: leave it to the game's reset
    to seed), store what the game left in `state[0]`, restore the process's state."""
    with _LOCK:
        outer = random.getstate()
        if state[0] is not None:
            random.setstate(state[0])
        try:
            yield
        finally:
            state[0] = random.getstate()
            random.setstate(outer)


class TextArenaEnv(Env):
    """One game of a checked textarena id (see the module); `options` override the id's own
    constructor arguments."""

    def __init__(self, game: str, options: dict | None = None, bracket_actions: bool = True):
        cls, kwargs = game_class(game)
        self.game, self.make_game = game, (lambda: cls(**{**kwargs, **(options or {})}))
        self.bracket_actions = bracket_actions
        self.env, self._random = None, [None]

    def reset(self, sample: Sample, seed: int) -> str:
        game_seed = seed
        if sample.answer.strip():
            try:
                game_seed = int(sample.answer)
            except ValueError:
                raise ValueError(f"{sample.source or 'sample'}: a textarena task's answer is its game seed, an "
                                 f"integer; got {sample.answer!r}") from None
        ta = _textarena()
        with _own_random(self._random):
            env = self.make_game()
            self.env = ta.wrappers.ActionFormattingWrapper(env) if self.bracket_actions else env
            self.env.reset(num_players=1, seed=game_seed)
            if not isinstance(env.state, ta.SinglePlayerState):
                raise ConfigError(f"env.game = {self.game!r} is not a single-player game")
            return self._new_messages(ta)

    def step(self, action: str) -> StepResult:
        ta = _textarena()
        with _own_random(self._random):
            done, _info = self.env.step(action)
            observation = self._new_messages(ta)
            if not done:
                return StepResult(observation)
            rewards, game_info = self.env.close()
        return self._outcome(float(rewards[0]), game_info[0])

    def _new_messages(self, ta) -> str:
        _player, messages = self.env.get_observation()
        return "\n".join(m for _sender, m, kind in messages if kind != ta.ObservationType.PLAYER_ACTION)

    def _outcome(self, reward: float, info: dict) -> StepResult:
        if info.get("invalid_move"):
            reason = "invalid_move"
        else:
            reason = "won" if reward >= 1.0 else "game_over"
        return StepResult("", reward=reward, done=True, stop_reason=reason, metrics={f"game/{reason}": 1.0})


def textarena_env(game: str, options: dict | None = None, bracket_actions: bool = True) -> Callable[[], Env]:
    """A factory of `TextArenaEnv`s, after one game was built and reset (seed 0) so that a
    wrong id or option fails when the run starts, not inside an episode."""
    probe = TextArenaEnv(game, options, bracket_actions)
    try:
        probe.reset(Sample("", "0"), 0)
    except TypeError as e:  # an option the game's constructor does not take
        raise ConfigError(f"env.options for {game!r}: {e}") from None
    return lambda: TextArenaEnv(game, options, bracket_actions)
