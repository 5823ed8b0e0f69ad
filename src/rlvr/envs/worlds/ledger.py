"""A bank ledger: move money between accounts until the balances match the goal."""

from rlvr.envs.worlds.spec import WorldSpec, reach_task, tool


def transfer(state, args):
    state["balances"][args["src"]] -= args["amount"]
    state["balances"][args["dst"]] += args["amount"]
    return f"moved {args['amount']} from {args['src']} to {args['dst']}"


def can_transfer(state, args):
    b = state["balances"]
    if args["src"] not in b or args["dst"] not in b or args["src"] == args["dst"]:
        return "two different existing accounts are needed"
    if not 0 < args["amount"] <= b[args["src"]]:
        return f"{args['src']} holds {b[args['src']]}: amount must be 1..{b[args['src']]}"
    return None


def start(rng):
    return {"balances": {name: rng.randint(2, 6) for name in rng.sample("abcde", 3)}}


def describe(state):
    return ", ".join(f"{k}={v}" for k, v in sorted(state["balances"].items()))


LEDGER = WorldSpec(
    name="ledger",
    state={"balances": "dict[str, int]"},
    tools=[
        tool("transfer", {"src": "str", "dst": "str", "amount": "int"}, "Move money between accounts.",
             transfer, can_transfer),
        tool("balance", {"account": "str"}, "Read one account's balance.",
             lambda s, a: str(s["balances"].get(a["account"], "no such account"))),
    ],
    tasks=[reach_task("rebalance", start, describe,
                      lambda s: {"str": sorted(s["balances"]), "int": [1, 2, 3]})],
    instructions="Accounts. Tools: transfer(src, dst, amount), balance(account).\n",
)
