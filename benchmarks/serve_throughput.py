"""`rlvr serve` under concurrent clients: the Starlette/uvicorn server of this tree against the
standard-library server it replaced, in the same run, on the same tiny model, loopback only.

Each server runs as its own `python -m rlvr.serve` subprocess (one at a time). The old one is
the tree at `--old-ref` (default: the last commit with `http.server`), extracted with
`git archive` into a temporary folder: it is not part of the library. Clients are threads of
this process; each request opens a fresh connection (as the HTTP judge's urllib does) and asks
for a greedy 16-token completion of one of the workload's 22-token prompts
("What is a+b? Answer:", shared/bench/WORKLOAD.md). A request that raises (connection reset,
refused, timed out) or gets a non-200 counts as failed; req/s counts answered requests over
the cell's wall time; p50/p99 are over answered requests.

    OMP_WAIT_POLICY=PASSIVE python benchmarks/serve_throughput.py [--seconds 6] [--rounds 2]
        [--clients 1,8,50] [--old-ref REF] [--probes] [--out serve.json]

`--probes` then sends each server the issue's bad requests once: a 200,000-deep array, a 10 MB
body, and a 7 MB prompt with a small request sent 1 s into it (its latency shows whether the
big one holds the model).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OLD_REF = "38620d0"  # main before the uvicorn server: src/rlvr/serve/http_server.py (http.server)
MODEL = dict(hidden_size=256, intermediate_size=1024, num_layers=4, num_heads=4, num_kv_heads=2,
             vocab_size=128, seed=20240601)  # the arith64-tinyqwen2-g8-v1 model (3,969,280 parameters)
MAX_TOKENS = 16


def make_model(folder: Path) -> None:
    sys.path.insert(0, str(REPO / "src"))
    from rlvr.models import build_char_tokenizer, tiny_qwen2

    tiny_qwen2(**MODEL).save_pretrained(folder)
    build_char_tokenizer().save_pretrained(folder)


def extract_tree(ref: str, into: Path) -> Path:
    archive = subprocess.run(["git", "-C", str(REPO), "archive", ref, "src/rlvr"], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into / "src"


def start_server(src: Path, model: Path, port: int) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(src), "OMP_WAIT_POLICY": "PASSIVE"}
    proc = subprocess.Popen([sys.executable, "-m", "rlvr.serve", str(model), "--port", str(port), "--name", "tiny"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server from {src} exited: {proc.stderr.read()[-2000:]}")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
            conn.request("GET", "/v1/models")
            if conn.getresponse().status == 200:
                return proc
        except OSError:
            time.sleep(0.2)
        finally:
            conn.close()
    proc.kill()
    raise RuntimeError(f"server from {src} did not start in 120 s")


def one_request(port: int, body: bytes) -> str | None:
    """None when answered with a 200, else the failure's name."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.request("POST", "/v1/completions", body=body, headers={"Content-Type": "application/json"})
        reply = conn.getresponse()
        reply.read()
        return None if reply.status == 200 else f"HTTP {reply.status}"
    except (OSError, http.client.HTTPException) as e:
        return type(e).__name__
    finally:
        conn.close()


def load(port: int, clients: int, seconds: float) -> dict:
    """`clients` threads sending back-to-back requests for `seconds`; the cell's figures."""
    latencies: list[float] = []
    failures: dict[str, int] = {}
    lock, start = threading.Lock(), threading.Barrier(clients + 1)

    def client(i: int) -> None:
        rng = random.Random(i)
        start.wait()
        while time.perf_counter() < stop_at:
            a, b = rng.randint(10, 99), rng.randint(10, 99)
            body = json.dumps({"prompt": f"What is {a}+{b}? Answer:", "max_tokens": MAX_TOKENS,
                               "temperature": 0}).encode()
            t0 = time.perf_counter()
            failure = one_request(port, body)
            with lock:
                if failure is None:
                    latencies.append(time.perf_counter() - t0)
                else:
                    failures[failure] = failures.get(failure, 0) + 1

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    stop_at = time.perf_counter() + seconds
    began = time.perf_counter()
    start.wait()
    for t in threads:
        t.join()
    wall = time.perf_counter() - began
    cuts = statistics.quantiles(latencies, n=100) if len(latencies) > 1 else [float("nan")] * 99
    return {"clients": clients, "answered": len(latencies), "failed": sum(failures.values()), "failures": failures,
            "req_s": len(latencies) / wall, "p50_ms": 1000 * cuts[49], "p99_ms": 1000 * cuts[98], "wall_s": wall}


def timed_post(port: int, body: bytes, timeout: float = 180) -> tuple[str, float]:
    """(outcome, seconds): "HTTP <status>: <start of the message>" or the exception's name."""
    t0 = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("POST", "/v1/completions", body=body, headers={"Content-Type": "application/json"})
        reply = conn.getresponse()
        raw = reply.read()
        try:
            message = json.loads(raw).get("error", {}).get("message", "")[:60]
        except ValueError:
            message = f"not JSON: {raw[:40]!r}"
        outcome = f"HTTP {reply.status}" + (f": {message}" if message else "")
    except (OSError, http.client.HTTPException) as e:
        outcome = type(e).__name__
    finally:
        conn.close()
    return outcome, time.perf_counter() - t0


def probes(port: int) -> dict:
    """The issue's failure cases, once each: what the client sees and how long it takes."""
    small = json.dumps({"prompt": "What is 12+34? Answer:", "max_tokens": MAX_TOKENS, "temperature": 0}).encode()
    out = {"deep_200k": timed_post(port, b"[" * 200_000 + b"]" * 200_000),
           "body_10MB": timed_post(port, json.dumps({"prompt": "a" * (10 << 20)}).encode())}
    big = threading.Thread(target=lambda: out.update(prompt_7MB=timed_post(port, json.dumps({"prompt": "a" * 7_000_000}).encode())))
    big.start()
    time.sleep(1.0)  # the 7 MB prompt is being read or tokenised; a small request meanwhile:
    out["small_during_7MB"] = timed_post(port, small)
    big.join()
    return out


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker_stats(port: int) -> dict:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", "/v1/stats")
        return json.loads(conn.getresponse().read())
    finally:
        conn.close()


def measure(sides: dict[str, Path], model: Path, clients: list[int], seconds: float, rounds: int,
            with_probes: bool) -> list[dict]:
    """Both servers up at once (an idle one costs nothing); each cell alternates old/new so that
    the shared machine's load drifts over both alike."""
    ports = {name: free_port() for name in sides}
    procs = {name: start_server(src, model, ports[name]) for name, src in sides.items()}
    rows = []
    try:
        for port in ports.values():
            load(port, 1, 1.0)  # warm-up: first-call costs (weight fusing, allocator) out of the cells
        for rnd in range(1, rounds + 1):
            for c in clients:
                order = ["old", "new"] if (rnd + c) % 2 else ["new", "old"]
                for name in order:
                    rows.append({"round": rnd, "server": name, **load(ports[name], c, seconds)})
        rows.append({"worker_stats": worker_stats(ports["new"])})
        if with_probes:
            rows.append({"probes": {name: probes(port) for name, port in ports.items()}})
        return rows
    finally:
        for proc in procs.values():
            proc.terminate()
            proc.wait(timeout=30)


def print_table(rows: list[dict]) -> None:
    print("| round | clients | server | answered / sent | req/s | p50 ms | p99 ms |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        if "server" not in r:
            continue
        sent = r["answered"] + r["failed"]
        print(f"| {r['round']} | {r['clients']} | {r['server']} | {r['answered']} / {sent} | {r['req_s']:.1f} | "
              f"{r['p50_ms']:.1f} | {r['p99_ms']:.1f} |")
    print("\n| round | clients | new / old req/s | old p50 / new p50 | old p99 / new p99 |")
    print("|---|---|---|---|---|")
    for r in rows:
        if r.get("server") != "new":
            continue
        old = next(o for o in rows if o.get("server") == "old" and o["round"] == r["round"] and o["clients"] == r["clients"])
        print(f"| {r['round']} | {r['clients']} | {r['req_s'] / old['req_s']:.2f}x | "
              f"{old['p50_ms'] / r['p50_ms']:.2f}x | {old['p99_ms'] / r['p99_ms']:.2f}x |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=6.0, help="length of one cell (default 6)")
    ap.add_argument("--rounds", type=int, default=2, help="rounds; the servers' order alternates (default 2)")
    ap.add_argument("--clients", default="1,8,50", help="concurrent clients per cell (default 1,8,50)")
    ap.add_argument("--old-ref", default=OLD_REF, help=f"git ref of the old server (default {OLD_REF})")
    ap.add_argument("--probes", action="store_true",
                    help="after the cells, send each server the issue's bad requests once (up to minutes for the old one)")
    ap.add_argument("--out", type=Path, help="also write every cell as JSON")
    args = ap.parse_args()
    clients = [int(c) for c in args.clients.split(",")]
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        model, old_root = Path(tmp) / "model", Path(tmp) / "old"
        old_root.mkdir()
        make_model(model)
        sides = {"old": extract_tree(args.old_ref, old_root), "new": REPO / "src"}
        rows = measure(sides, model, clients, args.seconds, args.rounds, args.probes)
    load_after = os.getloadavg()
    print_table(rows)
    print(f"\nload average (1/5/15 min) before {load_before}, after {load_after}; {os.cpu_count()} CPUs")
    for row in rows:
        for name, found in row.get("probes", {}).items():
            for probe, (outcome, secs) in found.items():
                print(f"probe {name:3s} {probe:16s} {secs:7.2f} s  {outcome}")
    s = next(r["worker_stats"] for r in rows if "worker_stats" in r)
    print(f"new server, whole run: {s['answered']} answered in {s['batches']} engine calls "
          f"(largest batch {s['largest_batch']}); refused: {s['rejected_queue_full']} queue full, "
          f"{s['timed_out']} timed out; engine errors {s['engine_errors']}")
    if args.out:
        args.out.write_text(json.dumps({"rows": rows, "load_before": load_before, "load_after": load_after,
                                        "old_ref": args.old_ref, "seconds": args.seconds}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
