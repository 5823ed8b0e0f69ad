"""The server's caps, one value each, checked once when the server is built.

Every cap answers a request that crosses it with a JSON error instead of letting it slow or
crash the server: the body size (413), the tokens a request may make the model process (400),
the requests waiting for the model (503 with Retry-After), the time a request may take
from arrival to answer (504), the time it may take to arrive (408), and the connections open
at once, in all and from one address (503; see guard.py).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from rlvr.errors import ConfigError


@dataclass(frozen=True)
class ServeLimits:
    # 1 MiB holds hundreds of judge prompts; the old 8 MiB let one body tie up the tokenizer.
    max_body_bytes: int = 1 << 20
    # Over one request: sum over its completions of (prompt tokens + max_tokens).
    max_request_tokens: int = 65536
    # Requests accepted but not yet taken into an engine batch; one more is a 503.
    queue_size: int = 256
    # Rows (prompt x n) in one engine call; a request larger than this runs alone.
    max_batch_rows: int = 64
    # How long the worker waits for more compatible requests before starting a batch; 0 takes
    # only what queued up while the previous batch ran (no latency added to a lone request).
    batch_wait_s: float = 0.0
    # From arrival to answer; past it the client gets a 504 and the model drops the request.
    request_timeout_s: float = 60.0
    # From a connection's opening (or its previous answer) until its request is in, headers and
    # body; past it a JSON 408 and the connection closes (guard.py: slow clients).
    read_timeout_s: float = 10.0
    # Open connections in all, and from one client address; one more is a JSON 503 (guard.py).
    # Idle connections cost little; 1,100 slow clients filled uvicorn's old cap of 1,024.
    max_connections: int = 4096
    max_connections_per_client: int = 128

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            low_ok = value >= 0 if f.name == "batch_wait_s" else value > 0
            if isinstance(value, bool) or not low_ok:
                bound = ">= 0" if f.name == "batch_wait_s" else "> 0"
                raise ConfigError(f"serve limit {f.name} must be {bound}, got {value!r}")


# Descriptors beyond the connections: the model's files, the listening socket, logs, threads.
SPARE_FILES = 64


def allow_open_files(limits: ServeLimits) -> None:
    """Raise this process's open-file limit (soft, up to the hard one) to hold
    `max_connections`; ConfigError naming the flag when the hard limit is too low."""
    import resource

    needed = limits.max_connections + SPARE_FILES
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < needed:
        if hard != resource.RLIM_INFINITY and hard < needed:
            raise ConfigError(f"--max-connections {limits.max_connections} needs {needed} open files, "
                              f"and this process may open at most {hard} (ulimit -Hn); lower it")
        resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))
