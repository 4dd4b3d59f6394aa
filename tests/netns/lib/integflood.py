#!/usr/bin/env python3
"""A flood of integrity flows that never complete, for knockgw's namespace
tests and the benchmark (raw sockets).

  integflood.py --iface IF --dst B --dport P --skip N
                --source ADDR=ISN:TSVAL [--source ADDR=ISN:TSVAL ...]
                --flows K --segs M [--interval S] [--timeout S] [--ready FILE]
                [--sport-base PORT]

From each source address, K connections (ports PORT.. (default 30000) for
the first source, PORT + K.. for the next, ...) with the source's knock (ISN and
TSval; a knock is valid for any source port, and replay protection takes
it from its own address as a retransmission; each source needs its own,
as the same knock from another address is a replay).  Each connection that gets a SYN-ACK is ACKed
and then trickled M one-byte segments, one round every S seconds (default
0.5), from offset N past ISN+1 on, two bytes apart: past the bytes the
knock covers, so the flow never verifies.  Creates FILE once the SYNs are
out.  Prints JSON: connections, SYN-ACKs, segments sent, RSTs seen.  The
caller drops this namespace's own RSTs.  Bounded: at most 4096
connections and 32 segments each, and the timeout (default 30 s).
"""
import argparse
import ipaddress
import json
import time

import pktlib as pk

F = pk.FLAGS
MAX_FLOWS = 4096
MAX_SEGS = 32


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--iface", required=True)
    p.add_argument("--dst", required=True)
    p.add_argument("--dport", type=int, required=True)
    p.add_argument("--skip", type=int, required=True)
    p.add_argument("--source", action="append", required=True)
    p.add_argument("--flows", type=int, required=True)
    p.add_argument("--segs", type=int, required=True)
    p.add_argument("--interval", type=float, default=0.5)
    p.add_argument("--timeout", type=float, default=30.0)
    p.add_argument("--ready")
    p.add_argument("--sport-base", type=int, default=30000)
    a = p.parse_args()
    fam = ipaddress.ip_address(a.dst).version
    w = pk.Wire(a.iface, fam)
    deadline = time.monotonic() + a.timeout
    segs = max(0, min(a.segs, MAX_SEGS))
    conns = {}  # (src, sport) -> (isn, tsval)
    sport = a.sport_base
    for s in a.source:
        src, knock = s.split("=")
        isn, tsval = knock.split(":")
        for _ in range(a.flows):
            if len(conns) >= MAX_FLOWS or sport > 65535:
                break
            conns[(str(ipaddress.ip_address(src)), sport)] = (int(isn, 16), int(tsval))
            sport += 1
    for i, ((src, sp), (isn, tsval)) in enumerate(conns.items()):
        syn = pk.tcp_segment(src, a.dst, sp, a.dport, isn, 0, F["S"], pk.syn_options(tsval))
        w.send(a.dst, pk.ip_packet(src, a.dst, syn))
        if i % 64 == 63:
            time.sleep(0.002)
    if a.ready:
        open(a.ready, "w").close()
    est = {}  # (src, sport) -> (rcv_nxt, peer tsval)
    rsts = 0

    def read(until):
        nonlocal rsts
        for ip in w.frames(min(until, deadline)):
            f = pk.parse(ip)
            if not f or f["src"] != a.dst or f["sport"] != a.dport:
                continue
            key = (f["dst"], f["dport"])
            if key not in conns:
                continue
            if f["flags"] & F["R"]:
                rsts += 1
            elif f["flags"] & F["S"] and f["flags"] & F["A"] and key not in est:
                est[key] = ((f["seq"] + 1) & 0xFFFFFFFF, pk.peer_tsval(f["opts"]))
                isn, tsval = conns[key]
                ack = pk.tcp_segment(key[0], a.dst, key[1], a.dport, isn + 1, est[key][0], F["A"],
                                     pk.ts_option(tsval + 1, est[key][1]))
                w.send(a.dst, pk.ip_packet(key[0], a.dst, ack))

    read(time.monotonic() + 1.0)
    sent = 0
    for k in range(segs):
        for key, (nxt, peer_ts) in list(est.items()):
            isn, tsval = conns[key]
            seg = pk.tcp_segment(key[0], a.dst, key[1], a.dport, isn + 1 + a.skip + 2 * k, nxt,
                                 F["A"] | F["P"], pk.ts_option(tsval + 2 + k, peer_ts), b"x")
            w.send(a.dst, pk.ip_packet(key[0], a.dst, seg))
            sent += 1
        read(time.monotonic() + a.interval)
        if time.monotonic() >= deadline:
            break
    print(json.dumps({"connections": len(conns), "synacks": len(est), "segments": sent,
                      "rsts": rsts}))


if __name__ == "__main__":
    main()
