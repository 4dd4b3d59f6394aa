#!/usr/bin/env python3
"""Attacks on integrity mode, for knockgw's namespace tests (raw sockets).

  mitm.py send    --iface IF --src A --dst B --sport S --dport P --isn N --tsval T
                  --step HOW:FILE [--step HOW:FILE ...] [--wait S] [--late-ack]
                  [--handshake-file F]
                  [--timeout S]
        SYN (ISN N, TSval T); on SYN-ACK the handshake's ACK, --wait seconds
        of reading what the server says first (with --late-ack the handshake's
        ACK is not sent: the first step carries it), then each step's
        bytes from sequence ISN+1 on, in order, 50 ms apart.  HOW says how the
        segment is sent: "ok"; "paws" with a TSval older than the SYN's, which
        the receiving TCP drops (RFC 7323 PAWS); "md5" with a TCP-MD5 option
        the receiver has no key for, which it drops too; "more" sends FILE's
        bytes after everything sent so far; "syn" sends the connection's SYN
        again (FILE unused: "syn:-"); "wait" waits FILE seconds ("wait:0.5"),
        reading what comes meanwhile; "urgN" sends FILE's bytes like "ok"
        with URG set and urgent pointer N; "urgack" sends a bare ACK at
        ISN+1 with URG and urgent pointer FILE ("urgack:8"); "finat" a bare
        FIN at ISN+1+FILE ("finat:10").  Then it keeps
        reading: prints JSON with the SYN-ACK's flags, whether an RST came,
        the highest ack, and the bytes the server sent (hex).  The server's
        data is acknowledged so that it does not retransmit.  With
        --handshake-file, F is created once the SYN-ACK came (a test can
        then act between the handshake and the data).
  mitm.py syndata --iface IF --src A --dst B --sport S --dport P --isn N --tsval T
                  --data-file F [--timeout S]
        one SYN carrying F's bytes (TCP Fast Open without a cookie); prints
        the answer's flags.
  mitm.py hold    --iface IF --src A --dst B --sport-base S --dport P --isn N
                  --tsval T --flows K --segs M --skip N [--timeout S]
        K connections from ports S.. with the same knock (one valid SYN,
        replayed from its own address), each followed by M one-byte segments
        from offset N on (past the bytes the ISN covers: never complete);
        prints how many SYN-ACKs came.
The caller drops this namespace's own RSTs (lib.sh quiet_client_rsts).
Every loop is bounded by count and time.
"""
import argparse
import ipaddress
import json
import time

import pktlib as pk
from pktlib import ts_option

F = pk.FLAGS


def handshake(w, a, sport, deadline, ack=True):
    """SYN, wait for the SYN-ACK, ACK it (unless not ack).  Returns (synack or None, rst seen)."""
    syn = pk.tcp_segment(a.src, a.dst, sport, a.dport, a.isn, 0, F["S"],
                         pk.syn_options(a.tsval))
    w.send(a.dst, pk.ip_packet(a.src, a.dst, syn))
    for f in pk.replies(w, a.dst, sport, a.dport, deadline):
        if f["flags"] & F["R"]:
            return None, True
        if f["flags"] & F["S"] and f["flags"] & F["A"]:
            if ack:
                seg = pk.tcp_segment(a.src, a.dst, sport, a.dport, a.isn + 1, f["seq"] + 1,
                                     F["A"], ts_option(a.tsval + 1, pk.peer_tsval(f["opts"])))
                w.send(a.dst, pk.ip_packet(a.src, a.dst, seg))
            return f, False
    return None, False


def cmd_send(a):
    fam = ipaddress.ip_address(a.dst).version
    w = pk.Wire(a.iface, fam)
    deadline = time.monotonic() + a.timeout
    out = {"synack": None, "rst": False, "max_ack": None, "server_bytes": ""}
    synack, rst = handshake(w, a, a.sport, deadline, not a.late_ack)
    out["rst"] = rst
    if not synack:
        print(json.dumps(out))
        return
    out["synack"] = synack["flagstr"]
    if a.handshake_file:
        open(a.handshake_file, "w").close()
    peer_ts = pk.peer_tsval(synack["opts"])
    rcv_nxt = (synack["seq"] + 1) & 0xFFFFFFFF
    sent = 0
    got = bytearray()
    # A guesser waits for what the service says first (a banner).
    for f in pk.replies(w, a.dst, a.sport, a.dport, min(deadline, time.monotonic() + a.wait)):
        if f["flags"] & F["R"]:
            out["rst"] = True
        payload = bytes.fromhex(f["payload"])
        if payload:
            got += payload
            rcv_nxt = (f["seq"] + len(payload)) & 0xFFFFFFFF
            w.send(a.dst, pk.ip_packet(a.src, a.dst, pk.tcp_segment(
                a.src, a.dst, a.sport, a.dport, a.isn + 1, rcv_nxt, F["A"],
                ts_option(a.tsval + 1, pk.peer_tsval(f["opts"])))))
    for step in a.step:
        how, path = step.split(":", 1)
        if how == "syn":
            syn = pk.tcp_segment(a.src, a.dst, a.sport, a.dport, a.isn, 0, F["S"],
                                 pk.syn_options(a.tsval))
            w.send(a.dst, pk.ip_packet(a.src, a.dst, syn))
            time.sleep(0.05)
            continue
        if how in ("urgack", "finat"):
            n = int(path)
            seq = a.isn + 1 + (n if how == "finat" else 0)
            flags = F["A"] | (F["F"] if how == "finat" else F["U"])
            seg = pk.tcp_segment(a.src, a.dst, a.sport, a.dport, seq, rcv_nxt, flags,
                                 ts_option(a.tsval + 1, peer_ts))
            if how == "urgack":
                seg = pk.tcp_set_urg(a.src, a.dst, seg, n)
            w.send(a.dst, pk.ip_packet(a.src, a.dst, seg))
            time.sleep(0.05)
            continue
        if how == "wait":
            for f in pk.tracked(pk.replies(w, a.dst, a.sport, a.dport,
                                           min(deadline, time.monotonic() + float(path))),
                                out, a.isn):
                payload = bytes.fromhex(f["payload"])
                if payload:
                    got += payload
                    rcv_nxt = (f["seq"] + len(payload)) & 0xFFFFFFFF
            continue
        data = open(path, "rb").read()
        tsval = a.tsval + 1 if how != "paws" else a.tsval - 100000
        opts = ts_option(tsval, peer_ts)
        if how == "md5":
            opts += b"\x13\x12" + bytes(range(16))
        at = sent if how == "more" else 0
        urg = int(how[3:]) if how.startswith("urg") else None
        seg = pk.tcp_segment(a.src, a.dst, a.sport, a.dport, a.isn + 1 + at, rcv_nxt,
                             F["A"] | F["P"] | (F["U"] if urg is not None else 0), opts, data)
        if urg is not None:
            seg = pk.tcp_set_urg(a.src, a.dst, seg, urg)
        w.send(a.dst, pk.ip_packet(a.src, a.dst, seg))
        sent = max(sent, at + len(data))
        time.sleep(0.05)
    for f in pk.tracked(pk.replies(w, a.dst, a.sport, a.dport, deadline), out, a.isn):
        payload = bytes.fromhex(f["payload"])
        if payload:
            got += payload
            rcv_nxt = (f["seq"] + len(payload)) & 0xFFFFFFFF
            ack = pk.tcp_segment(a.src, a.dst, a.sport, a.dport, a.isn + 1 + sent, rcv_nxt,
                                 F["A"], ts_option(a.tsval + 2, pk.peer_tsval(f["opts"])))
            w.send(a.dst, pk.ip_packet(a.src, a.dst, ack))
    out["server_bytes"] = got.hex()
    print(json.dumps(out))


def cmd_syndata(a):
    fam = ipaddress.ip_address(a.dst).version
    w = pk.Wire(a.iface, fam)
    data = open(a.data_file, "rb").read()
    syn = pk.tcp_segment(a.src, a.dst, a.sport, a.dport, a.isn, 0, F["S"],
                         pk.syn_options(a.tsval), data)
    w.send(a.dst, pk.ip_packet(a.src, a.dst, syn))
    f = next(pk.replies(w, a.dst, a.sport, a.dport, time.monotonic() + a.timeout), None)
    print(json.dumps({"answer": f and f["flagstr"]}))


def cmd_hold(a):
    fam = ipaddress.ip_address(a.dst).version
    w = pk.Wire(a.iface, fam)
    deadline = time.monotonic() + a.timeout
    ports = [a.sport_base + i for i in range(a.flows)]
    for p in ports:
        syn = pk.tcp_segment(a.src, a.dst, p, a.dport, a.isn, 0, F["S"],
                             pk.syn_options(a.tsval))
        w.send(a.dst, pk.ip_packet(a.src, a.dst, syn))
    synacks = {}
    for ip in w.frames(deadline):
        f = pk.parse(ip)
        if not f or f["sport"] != a.dport or f["dport"] not in ports:
            continue
        if f["flags"] & F["S"] and f["flags"] & F["A"] and f["dport"] not in synacks:
            synacks[f["dport"]] = f
        if len(synacks) == len(ports):
            break
    for p, f in synacks.items():
        ts = ts_option(a.tsval + 1, pk.peer_tsval(f["opts"]))
        nxt = (f["seq"] + 1) & 0xFFFFFFFF
        w.send(a.dst, pk.ip_packet(a.src, a.dst, pk.tcp_segment(
            a.src, a.dst, p, a.dport, a.isn + 1, nxt, F["A"], ts)))
        for k in range(a.segs):
            seg = pk.tcp_segment(a.src, a.dst, p, a.dport, a.isn + 1 + a.skip + 2 * k, nxt,
                                 F["A"] | F["P"], ts, b"x")
            w.send(a.dst, pk.ip_packet(a.src, a.dst, seg))
    print(json.dumps({"synacks": len(synacks), "flows": a.flows}))


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    num = lambda x: int(x, 0)  # noqa: E731
    for name in ("send", "syndata", "hold"):
        s = sub.add_parser(name)
        s.add_argument("--iface", required=True)
        s.add_argument("--src", required=True)
        s.add_argument("--dst", required=True)
        s.add_argument("--dport", type=num, required=True)
        s.add_argument("--isn", type=num, required=True)
        s.add_argument("--tsval", type=num, required=True)
        s.add_argument("--timeout", type=float, default=3.0)
        if name == "hold":
            s.add_argument("--sport-base", type=num, required=True)
            s.add_argument("--flows", type=num, required=True)
            s.add_argument("--segs", type=num, required=True)
            s.add_argument("--skip", type=num, required=True)
        else:
            s.add_argument("--sport", type=num, required=True)
        if name == "send":
            s.add_argument("--step", action="append", required=True)
            s.add_argument("--wait", type=float, default=0.0)
            s.add_argument("--handshake-file")
            s.add_argument("--late-ack", action="store_true")
        if name == "syndata":
            s.add_argument("--data-file", required=True)
    a = p.parse_args()
    if a.flows if a.cmd == "hold" else 0:
        a.flows = min(a.flows, 1024)
        a.segs = min(a.segs, 64)
    {"send": cmd_send, "syndata": cmd_syndata, "hold": cmd_hold}[a.cmd](a)


if __name__ == "__main__":
    main()
