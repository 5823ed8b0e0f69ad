"""World specs that must be refused at load, each at its own line (tests/envs/test_worlds.py)."""

from rlvr.envs.worlds import WorldSpec, reach_task, task, tool
from rlvr.envs.worlds.spec import Instance


def start(rng):
    return {"n": 0}


STEP = tool("inc", {}, "Add one.", lambda s, a: s.update(n=s["n"] + 1) or "ok")
COUNT = reach_task("count", start, lambda s: str(s["n"]), lambda s: {})

UNKNOWN_STATE_TYPE = WorldSpec("bad1", {"n": "integer"}, [STEP], [COUNT])
UNKNOWN_ARG_TYPE = WorldSpec("bad2", {"n": "int"}, [tool("add", {"k": "float"}, "Add k.", lambda s, a: "ok")], [COUNT])
BREAKS_SCHEMA = WorldSpec("bad3", {"n": "int"}, [tool("name", {}, "Name it.", lambda s, a: s.update(n="one") or "ok")],
                          [COUNT])
NEVER = task("negative", lambda rng, d, spec: Instance({"n": 0}, "Make n negative.", lambda s: s["n"] < 0, {}, 1))
UNREACHABLE = WorldSpec("bad4", {"n": "int"}, [STEP], [NEVER])
