"""A day calendar: book, move and cancel meetings until the day matches the goal."""

from rlvr.envs.worlds.spec import WorldSpec, reach_task, tool

MEETINGS = ["standup", "review", "lunch", "1on1"]


def free(state, hour):
    return hour not in state["events"].values() and 9 <= hour <= 12


def book(state, args):
    state["events"][args["name"]] = args["hour"]
    return f"booked {args['name']} at {args['hour']}"


def cancel(state, args):
    del state["events"][args["name"]]
    return f"cancelled {args['name']}"


def start(rng):
    return {"events": dict(zip(rng.sample(MEETINGS, 2), rng.sample(range(9, 13), 2)))}


CALENDAR = WorldSpec(
    name="calendar",
    state={"events": "dict[str, int]"},
    tools=[
        tool("book", {"name": "str", "hour": "int"}, "Book (or move) a meeting at an hour from 9 to 12.", book,
             lambda s, a: None if free(s, a["hour"]) else f"{a['hour']} is taken or outside 9..12"),
        tool("cancel", {"name": "str"}, "Cancel a meeting.", cancel,
             lambda s, a: None if a["name"] in s["events"] else f"no meeting {a['name']}"),
        tool("agenda", {}, "Show the day.", lambda s, a: repr(dict(sorted(s["events"].items(), key=lambda x: x[1])))),
    ],
    tasks=[reach_task("plan_day", start, lambda s: repr(dict(sorted(s["events"].items()))),
                      lambda s: {"str": MEETINGS, "int": [9, 10, 11, 12]})],
    instructions="Calendar. Tools: book(name, hour), cancel(name), agenda().\n",
)
