#!/usr/bin/env python3
"""Unknocked SYNs at a steady pace, and the answer each one got.

  synflood.py --iface IF --src A --dst B --dport P --count N
              [--interval-ms M] [--sport-base S] [--isn X] [--linger S]
              [--ready FILE]

Sends N SYNs (at most 20000), one every M milliseconds (default 2), the
i-th from port S + i (default 20000) with ISN X (default 0x11111111, no
knock), and reads answers between sends, then for --linger seconds more
(default 1.5).  Creates FILE (if given) once the first SYN is out, so a
test can start an event during the flood.  Prints JSON: how many were
sent, the count of first answers by their flags ("SA", "RA", "none"), and
the indexes of the SYNs that got a SYN-ACK or nothing.  Bounded by N and
the pace: at most N * M ms + linger.
"""
import argparse
import json
import time

import pktlib

MAX_COUNT = 20000


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--iface", required=True)
    p.add_argument("--src", required=True)
    p.add_argument("--dst", required=True)
    p.add_argument("--dport", type=int, required=True)
    p.add_argument("--count", type=int, required=True)
    p.add_argument("--interval-ms", type=float, default=2.0)
    p.add_argument("--sport-base", type=int, default=20000)
    p.add_argument("--isn", default="11111111")
    p.add_argument("--linger", type=float, default=1.5)
    p.add_argument("--ready")
    a = p.parse_args()
    n = max(0, min(a.count, MAX_COUNT, 65535 - a.sport_base))
    fam = 6 if ":" in a.dst else 4
    w = pktlib.Wire(a.iface, fam)
    isn = int(a.isn, 16)
    flags = [None] * n

    def take(deadline):
        """Reads what has come until the deadline."""
        for ip in w.frames(deadline):
            f = pktlib.parse(ip)
            if not f or f["src"] != a.dst or f["sport"] != a.dport:
                continue
            i = f["dport"] - a.sport_base
            if 0 <= i < n and flags[i] is None:
                flags[i] = f["flagstr"]

    start = time.monotonic()
    for i in range(n):
        seg = pktlib.tcp_segment(a.src, a.dst, a.sport_base + i, a.dport, isn, 0,
                                 pktlib.FLAGS["S"], pktlib.syn_options(1000 + i))
        w.send(a.dst, pktlib.ip_packet(a.src, a.dst, seg))
        if i == 0 and a.ready:
            open(a.ready, "w").close()
        take(start + (i + 1) * a.interval_ms / 1000.0)
    deadline = time.monotonic() + a.linger
    while time.monotonic() < deadline and any(x is None for x in flags):
        take(min(deadline, time.monotonic() + 0.1))
    counts = {}
    for x in flags:
        counts[x or "none"] = counts.get(x or "none", 0) + 1
    print(json.dumps({
        "sent": n, "answers": counts,
        "synack": [i for i, x in enumerate(flags) if x == "SA"],
        "silent": [i for i, x in enumerate(flags) if x is None],
    }))


if __name__ == "__main__":
    main()
