"""The local OpenAI-compatible server, run for real in a subprocess, and the HTTP judge backend
against it: responses checked against a direct forward pass, error paths, and the HTTP judge
giving the same P(yes) as the in-process one."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest
import torch

from rlvr.errors import RewardError
from rlvr.rewards.judge import GenRMJudge, HttpJudgeBackend, ReasonParams, judge_prompt

NAME = "tiny-judge"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(judge_dir):
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "rlvr.serve", str(judge_dir), "--port", str(port),
                             "--name", NAME], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 60
    while True:
        try:
            urllib.request.urlopen(base + "/models", timeout=1).close()
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise RuntimeError(f"server did not start: {proc.communicate()}")
            time.sleep(0.1)
    yield base
    proc.terminate()
    proc.wait(timeout=10)


def post(base: str, body: object, raw: bytes | None = None) -> tuple[int, dict]:
    data = raw if raw is not None else json.dumps(body).encode()
    request = urllib.request.Request(base + "/completions", data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            return reply.status, json.load(reply)
    except urllib.error.HTTPError as e:
        return e.code, json.load(e)


def test_models_lists_the_served_name(server):
    with urllib.request.urlopen(server + "/models") as reply:
        assert [m["id"] for m in json.load(reply)["data"]] == [NAME]


def test_completions_logprobs_match_a_direct_forward(server, local):
    model, tok = local
    status, out = post(server, {"model": NAME, "prompt": ["ab", "xyz"], "n": 2, "max_tokens": 3,
                                "temperature": 0.5, "logprobs": 5, "seed": 7})
    assert status == 200 and [c["index"] for c in out["choices"]] == [0, 1, 2, 3]
    assert out["usage"]["prompt_tokens"] == 5 and out["usage"]["total_tokens"] == 5 + out["usage"]["completion_tokens"]
    for i, choice in enumerate(out["choices"]):
        prompt = ["ab", "xyz"][i // 2]
        lp = choice["logprobs"]
        ids = [tok.convert_tokens_to_ids(t) for t in lp["tokens"]]
        assert tok.decode(ids, skip_special_tokens=True) == choice["text"]
        full = tok(prompt, add_special_tokens=False)["input_ids"] + ids
        with torch.no_grad():
            logp = torch.log_softmax(model(input_ids=torch.tensor([full])).logits[0].double(), -1)
        for t, token_id in enumerate(ids):
            row = logp[len(full) - len(ids) + t - 1]
            assert lp["token_logprobs"][t] == pytest.approx(float(row[token_id]), abs=1e-5)
            top = lp["top_logprobs"][t]
            assert len(top) == 5 and list(top.values()) == pytest.approx(row.topk(5).values.tolist(), abs=1e-5)
        assert lp["text_offset"][0] == len(prompt)
    again = post(server, {"prompt": ["ab", "xyz"], "n": 2, "max_tokens": 3, "seed": 7})[1]
    assert [c["text"] for c in again["choices"]] == [c["text"] for c in out["choices"]]  # same seed


def test_greedy_text_and_stop_match_the_in_process_engine(server, local):
    from rlvr.engines import HFEngine, SamplingParams

    engine = HFEngine(*local)
    want = engine.generate(["hello"], 1, SamplingParams(max_new_tokens=12, temperature=0.0))[0][0].text
    got = post(server, {"prompt": "hello", "max_tokens": 12, "temperature": 0})[1]["choices"][0]
    assert got["text"] == want and got["finish_reason"] in ("stop", "length")
    stop = want[3:5]  # a stop string the greedy text contains: the text ends before it
    cut = post(server, {"prompt": "hello", "max_tokens": 12, "temperature": 0, "stop": [stop], "logprobs": 1})
    choice = cut[1]["choices"][0]
    assert choice["text"] == want[:want.find(stop)] and choice["finish_reason"] == "stop"
    assert "".join(choice["logprobs"]["tokens"]) == choice["text"]


@pytest.mark.parametrize("body, status, says", [
    (None, 400, "not valid JSON"),
    ({"model": "gpt-9", "prompt": "a"}, 404, "does not exist"),
    ({"prompt": "a", "n": 0}, 400, "'n' must be an integer"),
    ({"prompt": "a", "temperature": -1}, 400, "'temperature' must be a number"),
    ({"prompt": "a", "best_of": 2}, 400, "unsupported field(s) ['best_of']"),
    ({"prompt": ""}, 400, "'prompt' must be"),
    ({"prompt": "a", "stream": True}, 400, "'stream' is not supported"),
    ({"prompt": "a" * 1020, "max_tokens": 10}, 400, "exceeds the model's context of 1024"),
    ([1, 2], 400, "must be a JSON object"),
])
def test_bad_requests_get_a_json_error(server, body, status, says):
    code, out = post(server, body, raw=b"{not json" if body is None else None)
    assert code == status and says in out["error"]["message"]
    if status == 404:
        assert out["error"]["code"] == "model_not_found" and out["error"]["param"] == "model"


def test_unknown_path_is_404(server):
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(server + "/nope")
    assert e.value.code == 404 and "no route" in json.load(e.value)["error"]["message"]


def test_http_judge_equals_the_in_process_judge(server, local):
    from rlvr.orchestrate.judge_backend import TransformersJudgeBackend

    params = ReasonParams(max_new_tokens=12, temperature=0.0)
    args = {"samples": 2, "params": params, "top": 128, "suffix": "\nAnswer: "}
    in_process = GenRMJudge(TransformersJudgeBackend(*local), **args)
    over_http = GenRMJudge(HttpJudgeBackend(server, NAME, timeout_s=30), **args)
    for prompt, response in [("2+2=", "4"), ("Name a colour.", "blue, I think")]:
        a = in_process.ask(prompt, response, "Is it right?", "4")
        b = over_http.ask(prompt, response, "Is it right?", "4")
        assert 0.0 < a.score < 1.0 and abs(a.score - b.score) < 1e-4 and a.reason.split(";")[1:] == b.reason.split(";")[1:]


def test_http_judge_with_too_few_top_tokens_is_an_error(server, local):
    from rlvr.orchestrate.judge_backend import TransformersJudgeBackend

    args = {"params": ReasonParams(0, 0.0), "top": 1, "suffix": "\nAnswer: "}
    [top] = TransformersJudgeBackend(*local).next_token_logprobs([judge_prompt("p", "r", "q") + "\nAnswer: "], 1)
    assert top[0][0].strip().lower() not in ("y", "n")  # the precondition: the top token is neither
    with pytest.raises(RewardError, match="none of 1 sample"):
        GenRMJudge(HttpJudgeBackend(server, NAME), **args).ask("p", "r", "q")


def test_http_judge_errors_name_the_problem(server):
    with pytest.raises(RewardError, match=r"HTTP 404.*does not exist"):
        HttpJudgeBackend(server, "gpt-9").next_token_logprobs(["a"], 2)
    with pytest.raises(RewardError, match="cannot connect"):
        HttpJudgeBackend(f"http://127.0.0.1:{free_port()}/v1", None, timeout_s=2).reason("a", 1, ReasonParams(2))


class Garbage(BaseHTTPRequestHandler):
    """Answers every POST with the server's `reply` bytes and status 200."""

    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        body = self.server.reply
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.mark.parametrize("reply, says", [
    (b"<html>oops</html>", "reply is not JSON"),
    (b'{"object": "error"}', "no 'choices' list"),
    (b'{"choices": [{"text": "x", "logprobs": null}]}', r"no logprobs.top_logprobs\[0\]"),
])
def test_http_judge_rejects_malformed_replies(reply, says):
    stub = HTTPServer(("127.0.0.1", 0), Garbage)
    stub.reply = reply
    thread = threading.Thread(target=stub.serve_forever, daemon=True)
    thread.start()
    try:
        backend = HttpJudgeBackend(f"http://127.0.0.1:{stub.server_address[1]}/v1", None, timeout_s=5)
        with pytest.raises(RewardError, match=says):
            backend.next_token_logprobs(["a"], 2)
    finally:
        stub.shutdown()
        stub.server_close()


def test_serve_command_reports_a_missing_model_folder(tmp_path, capsys):
    from rlvr.cli.serve_command import main

    assert main([str(tmp_path / "nope"), "--port", "0"]) == 2
    assert "model folder not found" in capsys.readouterr().err


def test_serve_command_names_a_taken_port_and_a_bad_limit(tmp_path, capsys):
    from rlvr.cli.serve_command import main

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main([str(tmp_path), "--port", str(port)]) == 2
    assert f"cannot listen on 127.0.0.1:{port}" in capsys.readouterr().err
    assert main([str(tmp_path), "--port", "0", "--queue-size", "0"]) == 2
    assert "serve limit queue_size must be > 0, got 0" in capsys.readouterr().err
