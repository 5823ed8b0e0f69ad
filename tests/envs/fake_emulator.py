"""A fake OpenAI-compatible emulator for the emulated-env tests: `/v1/completions` over
starlette (served by openenv_servers.threaded-like uvicorn thread), answering each emulator
transcript (rlvr.envs.emulated) with guess-the-number's next line, computed from the
transcript's hidden answer and last action. `lie_above` > 0: a guess above it is always called
"too low" (an unfaithful emulator, for a fidelity below 1). Counts the requests it served."""

from __future__ import annotations

import json
import re

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from rlvr.envs.emulated import START


def next_line(prompt: str, lie_above: int) -> str:
    task = re.search(r"^Task: (.*)$", prompt, re.M).group(1)
    secret = int(re.search(r"^Hidden answer: (.*)$", prompt, re.M).group(1))
    if prompt.endswith(START):
        return json.dumps({"observation": task})
    action = json.loads(re.findall(r"^Action: (.*)$", prompt, re.M)[-1])
    found = re.search(r"-?\d+", action)
    if found is None:
        return json.dumps({"observation": "Answer with one whole number.", "reward": 0.0, "done": False})
    guess = int(found.group())
    if guess == secret:
        return json.dumps({"observation": "", "reward": 1.0, "done": True, "stop_reason": "solved"})
    low = guess < secret or (lie_above > 0 and guess > lie_above)
    side = "low: guess higher" if low else "high: guess lower"
    return json.dumps({"observation": f"{guess} is too {side}.", "reward": 0.0, "done": False})


def emulator_app(lie_above: int = 0, garbage: bool = False) -> Starlette:
    served = []

    async def completions(request: Request) -> JSONResponse:
        body = await request.json()
        served.append(body["prompt"])
        text = "I am an environment!" if garbage else next_line(body["prompt"], lie_above)
        return JSONResponse({"choices": [{"index": 0, "text": text}]})

    app = Starlette(routes=[Route("/v1/completions", completions, methods=["POST"])])
    app.state.served = served
    return app
