#!/usr/bin/env python3
"""Capture a connection's SYN on one link and send copies of it from
another, as an attacker who saw it can: for knockgw's namespace tests.

  synreplay.py capture --iface IF --dport P --out FILE [--ready FILE2]
                       [--timeout S]
        creates FILE2 (if given) once it listens, then waits (at most S
        seconds, default 20) for the first SYN to port P that IF sends or
        receives, IPv4 or IPv6, and writes that packet (from its IP header
        on) to FILE as hex; exits 1 if none came.
  synreplay.py replay --in FILE --count N --interval S [--after FILE2]
                      [--timeout T]
        waits (at most T seconds, default 20) for FILE2 to exist, if given,
        then sends the packet in FILE, unchanged, N times (at most 100), S
        seconds apart, through a raw socket: whatever route this namespace
        has to its destination, with its source address as it was.

Every loop is bounded by count and time.
"""
import argparse
import os
import select
import socket
import struct
import sys
import time

import pktlib

MAX_COUNT = 100


def cmd_capture(a):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(pktlib.ETH_P_ALL))
    s.bind((a.iface, 0))
    if a.ready:
        open(a.ready, "w").close()
    deadline = time.monotonic() + a.timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return 1
        r, _, _ = select.select([s], [], [], left)
        if not r:
            return 1
        data, _ = s.recvfrom(65535)
        if struct.unpack("!H", data[12:14])[0] not in (0x0800, 0x86DD):
            continue
        ip = data[14:]
        f = pktlib.parse(ip)
        if f and f["dport"] == a.dport and f["flags"] & 0x12 == 0x02:
            with open(a.out + ".tmp", "w") as out:
                out.write(ip.hex())
            os.rename(a.out + ".tmp", a.out)
            return 0


def cmd_replay(a):
    deadline = time.monotonic() + a.timeout
    while a.after and not os.path.exists(a.after):
        if time.monotonic() > deadline:
            return 1
        time.sleep(0.05)
    ip = bytes.fromhex(open(a.input).read().strip())
    f = pktlib.parse(ip)
    if not f:
        return 1
    if f["ipver"] == 4:
        tx = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    else:
        tx = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_RAW)
        tx.setsockopt(socket.IPPROTO_IPV6, pktlib.IPV6_HDRINCL, 1)
    for i in range(min(a.count, MAX_COUNT)):
        if i:
            time.sleep(a.interval)
        tx.sendto(ip, (f["dst"], 0))
    print(f["ipver"], f["src"], f["sport"], f["dst"], f["dport"], "%08x" % f["seq"])
    return 0


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("capture")
    c.add_argument("--iface", required=True)
    c.add_argument("--dport", type=int, required=True)
    c.add_argument("--out", required=True)
    c.add_argument("--ready")
    c.add_argument("--timeout", type=float, default=20.0)
    r = sub.add_parser("replay")
    r.add_argument("--in", dest="input", required=True)
    r.add_argument("--count", type=int, required=True)
    r.add_argument("--interval", type=float, required=True)
    r.add_argument("--after")
    r.add_argument("--timeout", type=float, default=20.0)
    a = p.parse_args()
    sys.exit({"capture": cmd_capture, "replay": cmd_replay}[a.cmd](a))


if __name__ == "__main__":
    main()
