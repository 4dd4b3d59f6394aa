#!/usr/bin/env python3
"""Floods knockgw's control socket with bad clients, for a bounded time.

  ctlflood.py SOCKET --seconds S [--max-open N] [--seed N] [--query LINE]

keeps up to N connections open (default 150) and opens new ones as old ones
end, until S seconds have passed; every connection plays one part:

  garbage     random printable and binary bytes, then LF
  binary      random bytes (NULs too), no LF, then a half-close
  long        5000..20000 bytes without LF, sent as fast as the socket takes
  silent      connects and never sends (the daemon drops it after 1 s)
  stall       half a request, then nothing
  fds         a valid QUERY with three descriptors passed (SCM_RIGHTS)
  hangup      connects and closes at once
  valid       the --query line, whose reply is counted apart

Each connection is given up by this side after 3 s at most.  Prints JSON:
connections opened, refused or failed to connect, replies by their first
word, and how many valid queries got "OK".  Every loop is bounded by time.
"""
import argparse
import errno
import json
import os
import random
import selectors
import socket
import time

PARTS = ["garbage", "binary", "long", "silent", "stall", "fds", "hangup", "valid"]
GIVE_UP = 3.0


class Conn:
    def __init__(self, sock, part, rng, query):
        self.sock = sock
        self.part = part
        self.start = time.monotonic()
        self.reply = b""
        self.connected = False
        if part == "garbage":
            n = rng.randrange(1, 300)
            self.out = bytes(rng.choice([rng.randrange(32, 127), rng.randrange(256)])
                             for _ in range(n)).replace(b"\n", b" ") + b"\n"
        elif part == "binary":
            self.out = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200))).replace(
                b"\n", b"\0")
        elif part == "long":
            self.out = b"QUERY " + b"9" * rng.randrange(5000, 20000)
        elif part == "stall":
            self.out = b"QUERY 198.51"
        elif part in ("fds", "valid"):
            self.out = query
        else:
            self.out = b""
        self.sent_fds = False


def main():
    p = argparse.ArgumentParser()
    p.add_argument("socket")
    p.add_argument("--seconds", type=float, default=5)
    p.add_argument("--max-open", type=int, default=150)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--query", default="QUERY 198.51.100.7 22")
    a = p.parse_args()
    rng = random.Random(a.seed)
    query = a.query.encode() + b"\n"
    sel = selectors.DefaultSelector()
    stats = {"opened": 0, "connect_failed": 0, "replies": {}, "no_reply": 0,
             "valid": 0, "valid_ok": 0, "parts": {k: 0 for k in PARTS}}
    conns = {}
    devnull = os.open("/dev/null", os.O_RDONLY)
    deadline = time.monotonic() + a.seconds

    def finish(c):
        sel.unregister(c.sock)
        c.sock.close()
        del conns[id(c.sock)]
        word = c.reply.split(b" ")[0].split(b"\n")[0].decode("latin-1") if c.reply else ""
        if word:
            stats["replies"][word] = stats["replies"].get(word, 0) + 1
        else:
            stats["no_reply"] += 1
        if c.part == "valid":
            stats["valid"] += 1
            if c.reply.startswith(b"OK"):
                stats["valid_ok"] += 1

    while True:
        now = time.monotonic()
        if now >= deadline and not conns:
            break
        # Open new connections while there is time and room.
        while now < deadline and len(conns) < a.max_open:
            part = rng.choice(PARTS)
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.setblocking(False)
            try:
                s.connect(a.socket)
            except OSError as e:
                s.close()
                stats["connect_failed"] += 1
                if e.errno in (errno.EAGAIN, errno.ECONNREFUSED, errno.ENOENT):
                    break  # backlog full or no daemon: let the loop breathe
                raise
            stats["opened"] += 1
            stats["parts"][part] += 1
            if part == "hangup":
                s.close()
                continue
            c = Conn(s, part, rng, query)
            conns[id(s)] = c
            sel.register(s, selectors.EVENT_READ | (selectors.EVENT_WRITE if c.out else 0), c)
        for key, ev in sel.select(timeout=0.05):
            c = key.data
            if ev & selectors.EVENT_WRITE and c.out:
                try:
                    if c.part == "fds" and not c.sent_fds:
                        fds = [devnull, devnull, devnull]
                        n = socket.send_fds(c.sock, [c.out], fds)
                        c.sent_fds = True
                    else:
                        n = c.sock.send(c.out)
                    c.out = c.out[n:]
                except BlockingIOError:
                    pass
                except OSError:
                    finish(c)
                    continue
                if not c.out:
                    if c.part == "binary":
                        try:
                            c.sock.shutdown(socket.SHUT_WR)
                        except OSError:
                            pass
                    sel.modify(c.sock, selectors.EVENT_READ, c)
            if ev & selectors.EVENT_READ:
                try:
                    data = c.sock.recv(4096)
                except BlockingIOError:
                    continue
                except OSError:
                    data = b""
                if data:
                    c.reply += data
                else:
                    finish(c)
        now = time.monotonic()
        for c in list(conns.values()):
            if now - c.start > GIVE_UP or (now >= deadline + GIVE_UP):
                finish(c)
    os.close(devnull)
    print(json.dumps(stats, sort_keys=True))


if __name__ == "__main__":
    main()
