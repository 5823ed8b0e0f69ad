"""env.kind -> what a run's producer draws its scored groups from (orchestrate/producers.py):
single-turn rollouts (`RolloutSource`) for "none", the same as one-turn episodes for
"single_turn" (`OneTurnSource`), an environment's episodes (`EpisodeSource`) for the others.
The loop looks the plan's `source` up here (orchestrate/loop.py `make_producer`)."""

from __future__ import annotations

from collections.abc import Callable

from rlvr import names
from rlvr.config import Config
from rlvr.orchestrate.episode_source import EpisodeSource
from rlvr.orchestrate.one_turn_source import OneTurnSource
from rlvr.orchestrate.parts import Parts
from rlvr.orchestrate.rollouts import RolloutSource, Source
from rlvr.orchestrate.watchdog import Watchdog

SourceBuilder = Callable[[Config, Parts, Watchdog], Source]
SOURCES: dict[str, SourceBuilder] = names.ENV_KIND.bind({
    "none": RolloutSource, "guess_number": EpisodeSource.from_run, "python_tool": EpisodeSource.from_run,
    "sql": EpisodeSource.from_run, "single_turn": OneTurnSource, "textarena": EpisodeSource.from_run,
    "custom": EpisodeSource.from_run, "repo": EpisodeSource.from_run, "world": EpisodeSource.from_run,
    "openenv": EpisodeSource.from_run, "emulated": EpisodeSource.from_run,
}, table="SOURCES")
