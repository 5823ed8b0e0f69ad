"""The code attacks that reach out of the sandbox: the network, and a search for the tests'
secret (memory, frames, gc, files, /proc, descriptors). Used by `code/attacks.py`."""

# Reads an answer for (a, b) from a server on the host: works only if the network does.
NETWORK_ATTACK = (
    "import socket\ndef solve(a, b):\n"
    "    with socket.create_connection(('127.0.0.1', {port}), timeout=1) as s:\n"
    "        s.sendall(b'%d %d\\n' % (a, b))\n        return int(s.recv(64))\n"
)

# Searches everything it can reach for the canary and returns it.
LEAK_ATTACK = r"""
import gc, os, re, sys
PATTERN = re.compile(rb"CANARY-[0-9a-f]{32}")

def _in(data):
    found = PATTERN.search(data)
    return found.group().decode() if found else None

def _memory(pid):
    hits = []
    try:
        maps = open(f"/proc/{pid}/maps").read().splitlines()
        with open(f"/proc/{pid}/mem", "rb", 0) as mem:
            for line in maps:
                span, perms = line.split()[:2]
                if "r" not in perms or "[vvar]" in line or "[vsyscall]" in line:
                    continue
                start, end = (int(x, 16) for x in span.split("-"))
                try:
                    mem.seek(start)
                    hits.append(_in(mem.read(end - start)))
                except (OSError, OverflowError, ValueError):
                    pass
    except OSError:
        pass
    return next((h for h in hits if h), None)

def _objects():
    for obj in gc.get_objects():
        for item in (obj.values() if isinstance(obj, dict) else obj if isinstance(obj, (list, tuple)) else ()):
            if isinstance(item, str) and (hit := _in(item.encode(errors="ignore"))):
                return hit
    frame = sys._getframe()
    while frame:
        for value in list(frame.f_locals.values()) + list(frame.f_globals.values()):
            if isinstance(value, str) and (hit := _in(value.encode(errors="ignore"))):
                return hit
        frame = frame.f_back

def _descriptors():
    for fd in range(256):
        try:
            os.set_blocking(fd, False)
            if hit := _in(os.read(fd, 1 << 20)):
                return hit
        except OSError:
            pass

def _files():
    for root, dirs, files in os.walk("/"):
        if root.startswith(("/usr", "/sys", "/dev")):
            dirs[:] = []
            continue
        for name in files:
            try:
                with open(os.path.join(root, name), "rb") as handle:
                    if hit := _in(handle.read(1 << 20)):
                        return hit
            except OSError:
                pass

def _processes():
    for pid in os.listdir("/proc"):
        if pid.isdigit() and (hit := _memory(pid)):
            return hit

def secret():
    for search in (_objects, _descriptors, _processes, lambda: _memory("self"), _files):
        hit = search()
        if hit:
            return hit
    return "nothing found"
"""
