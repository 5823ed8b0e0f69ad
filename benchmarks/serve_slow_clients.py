"""`rlvr serve` while slow clients hold connections: normal requests' success, this tree against
the tree before the connection guard (`--old-ref`), in the same run, loopback only.

For each server and each `--slow` count, that many clients open a connection, send half a
request line and stall; one that the server closes reconnects (an attacker that keeps the
pressure on). Meanwhile 4 normal clients send back-to-back greedy 16-token requests from
127.0.0.1 for `--seconds`, each on a fresh connection; a non-200 or a connection error is a
failure. Two layouts: all slow clients from one address (127.0.0.2), and each from its own
(127.0.x.y; all of 127/8 is loopback on Linux). Every loop stops at its deadline.

    OMP_WAIT_POLICY=PASSIVE python benchmarks/serve_slow_clients.py [--slow 1000] [--seconds 15]
        [--old-ref 61ebf33] [--servers old,new] [--out slow.json]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import resource
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from serve_throughput import MAX_TOKENS, REPO, extract_tree, one_request, start_server  # noqa: E402

OLD_REF = "61ebf33"  # before rlvr/serve/guard.py: uvicorn's limit_concurrency, no read timeout
MODEL = REPO / "models" / "tiny-arith"


def slow_connection(port: int, source: str) -> socket.socket | None:
    try:
        sock = socket.socket()
        sock.bind((source, 0))
        sock.settimeout(2)
        sock.connect(("127.0.0.1", port))
        sock.sendall(b"POST /v1/completions HT")
        sock.setblocking(False)
        return sock
    except OSError:
        return None


def closed_by_server(sock: socket.socket) -> bool:
    try:
        sock.recv(4096)  # data (a 408 or 503) or EOF: the server is done with it
        return True
    except BlockingIOError:
        return False
    except OSError:
        return True


def hold(port: int, sources: list[str], stop_at: float, shared) -> None:
    """Keep one stalled connection per source open until `stop_at`, reopening closed ones."""
    resource.setrlimit(resource.RLIMIT_NOFILE, (resource.getrlimit(resource.RLIMIT_NOFILE)[1],) * 2)
    counts: Counter = Counter()
    socks = [slow_connection(port, s) for s in sources]
    counts["slow_opened"] = sum(s is not None for s in socks)
    while time.monotonic() < stop_at:
        for i, sock in enumerate(socks):
            if sock is None or closed_by_server(sock):
                if sock is not None:
                    sock.close()
                    counts["slow_closed_by_server"] += 1
                socks[i] = slow_connection(port, sources[i])
        time.sleep(0.25)
    for sock in socks:
        if sock is not None:
            sock.close()
    shared.update(counts)


def normal_clients(port: int, seconds: float, counts: Counter) -> None:
    body = json.dumps({"prompt": "What is 12+34? Answer:", "max_tokens": MAX_TOKENS, "temperature": 0}).encode()
    stop_at = time.monotonic() + seconds
    lock = threading.Lock()

    def client() -> None:
        while time.monotonic() < stop_at:
            failure = one_request(port, body)
            with lock:
                counts["ok" if failure is None else failure] += 1

    threads = [threading.Thread(target=client) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def cell(port: int, slow: int, layout: str, seconds: float) -> dict:
    if layout == "one address":
        sources = ["127.0.0.2"] * slow
    else:
        sources = [f"127.0.{2 + i // 250}.{1 + i % 250}" for i in range(slow)]
    counts: Counter = Counter()
    # The slow clients get a process of their own: as threads here they would hold the GIL
    # against the normal clients whose success is measured.
    slow_counts = multiprocessing.Manager().dict()
    holder = multiprocessing.Process(target=hold, args=(port, sources, time.monotonic() + seconds + 3, slow_counts))
    holder.start()
    time.sleep(2)  # let the slow connections settle in
    normal_clients(port, seconds, counts)
    holder.join()
    counts.update(dict(slow_counts))
    total = sum(v for k, v in counts.items() if not k.startswith("slow"))
    return {"slow": slow, "layout": layout, "ok": counts["ok"], "requests": total,
            "success": round(counts["ok"] / max(total, 1), 3), "counts": dict(counts)}


def stop(proc) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:  # the old server can wait on its stalled connections
        proc.kill()
        proc.wait(timeout=15)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--slow", default="1000")
    ap.add_argument("--seconds", type=float, default=15)
    ap.add_argument("--old-ref", default=OLD_REF)
    ap.add_argument("--servers", default="old,new")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # thousands of sockets
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        trees = {"old": extract_tree(args.old_ref, Path(tmp)), "new": REPO / "src"}
        trees = {name: trees[name] for name in args.servers.split(",")}
        for name, src in trees.items():
            for slow in (int(s) for s in args.slow.split(",")):
                for layout in ("one address", "own addresses"):
                    port = 18000 + len(rows)
                    proc = start_server(src, MODEL, port)
                    try:
                        row = {"server": name, **cell(port, slow, layout, args.seconds)}
                    finally:
                        stop(proc)
                    print(json.dumps(row), flush=True)
                    rows.append(row)
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
