"""Generated tool worlds (issue 25): a declarative spec (spec.py) checked at load (check.py)
and played by `WorldEnv` (env.py); the shipped worlds, by name, in `WORLDS`."""

from rlvr.envs.worlds.calendar import CALENDAR
from rlvr.envs.worlds.files import FILES
from rlvr.envs.worlds.ledger import LEDGER
from rlvr.envs.worlds.spec import SpecError, WorldSpec, reach_task, task, tool

WORLDS: dict[str, WorldSpec] = {w.name: w for w in (LEDGER, FILES, CALENDAR)}

__all__ = ["WORLDS", "SpecError", "WorldSpec", "reach_task", "task", "tool"]
