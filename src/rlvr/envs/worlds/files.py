"""A small file system: write, move and delete files until the tree matches the goal."""

from rlvr.envs.worlds.spec import WorldSpec, reach_task, tool

NAMES = ["a.txt", "b.txt", "notes.md", "todo.md", "old.log"]


def write(state, args):
    state["files"][args["path"]] = args["text"]
    return f"wrote {args['path']}"


def move(state, args):
    state["files"][args["dst"]] = state["files"].pop(args["src"])
    return f"moved {args['src']} to {args['dst']}"


def can_move(state, args):
    f = state["files"]
    return None if args["src"] in f and args["dst"] not in f else "the source must exist and the target must not"


def delete(state, args):
    del state["files"][args["path"]]
    return f"deleted {args['path']}"


def start(rng):
    return {"files": {name: rng.choice(["hi", "todo", "42"]) for name in rng.sample(NAMES, 2)}}


FILES = WorldSpec(
    name="files",
    state={"files": "dict[str, str]"},
    tools=[
        tool("write", {"path": "str", "text": "str"}, "Write text to a file.", write),
        tool("move", {"src": "str", "dst": "str"}, "Rename a file.", move, can_move),
        tool("delete", {"path": "str"}, "Delete a file.", delete,
             lambda s, a: None if a["path"] in s["files"] else f"no file {a['path']}"),
        tool("list_files", {}, "List the files.", lambda s, a: ", ".join(sorted(s["files"])) or "(empty)"),
    ],
    tasks=[reach_task("tidy", start, lambda s: repr(dict(sorted(s["files"].items()))),
                      lambda s: {"str": NAMES, "text": ["hi", "todo", "42"]})],
    instructions="Files. Tools: write(path, text), move(src, dst), delete(path), list_files().\n",
)
