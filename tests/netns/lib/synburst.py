#!/usr/bin/env python3
"""Many SYNs with chosen ISNs at once, and the answer each one got.

  synburst.py --iface IF --src A --dst B --dport P --list FILE
              [--sport-base N] [--timeout S]

FILE holds one "TSVAL ISN" pair per line (ISN in hex, as knock-connect isn
prints it), or "TSVAL ISN SRC" to send that one from SRC instead of --src.
The i-th SYN goes from port sport-base + i with that TSVAL and ISN; all are sent before any answer is read, so a table the daemon fills
fills in this order.  Prints JSON: how many were sent, the count of answers
by their flags ("SA", "RA", "none"), and the flags in sending order.  Uses
pktlib.py's packet builders; bounded by the number of lines and the timeout.
"""
import argparse
import json
import time

import pktlib


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--iface", required=True)
    p.add_argument("--src", required=True)
    p.add_argument("--dst", required=True)
    p.add_argument("--dport", type=int, required=True)
    p.add_argument("--list", required=True)
    p.add_argument("--sport-base", type=int, default=46000)
    p.add_argument("--timeout", type=float, default=3.0)
    a = p.parse_args()
    pairs = [line.split() for line in open(a.list) if line.strip()]
    fam = 6 if ":" in a.dst else 4
    w = pktlib.Wire(a.iface, fam)
    for i, fields in enumerate(pairs):
        tsval, isn = fields[0], fields[1]
        src = fields[2] if len(fields) > 2 else a.src
        seg = pktlib.tcp_segment(src, a.dst, a.sport_base + i, a.dport, int(isn, 16), 0,
                                 pktlib.FLAGS["S"], pktlib.syn_options(int(tsval)))
        w.send(a.dst, pktlib.ip_packet(src, a.dst, seg))
    flags = [None] * len(pairs)
    deadline = time.monotonic() + a.timeout
    for ip in w.frames(deadline):
        f = pktlib.parse(ip)
        if not f or f["src"] != a.dst or f["sport"] != a.dport:
            continue
        i = f["dport"] - a.sport_base
        if 0 <= i < len(pairs) and flags[i] is None:
            flags[i] = f["flagstr"]
        if all(x is not None for x in flags):
            break
    counts = {}
    for x in flags:
        counts[x or "none"] = counts.get(x or "none", 0) + 1
    print(json.dumps({"sent": len(pairs), "answers": counts, "flags": flags}))


if __name__ == "__main__":
    main()
