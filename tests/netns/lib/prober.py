#!/usr/bin/env python3
"""Raw-socket TCP prober for knockgw's namespace tests.

It sends hand-made segments with chosen ISNs, timestamps and flags, and
captures the answers whole (AF_PACKET on the given interface), so the tests
can compare every header field of an answer with a closed port's.

  prober.py probe   --iface IF --src A --dst B --sport S --dport P
                    [--seq N] [--ack N] [--flags syn|fin|null|xmas|ack|maimon|F,S,R,P,A,U]
                    [--tsval N | --no-ts] [--tos N] [--flowlabel N] [--timeout S]
                    [--bad-csum] [--tcp-opts HEX] [--ip-opts HEX] [--ext NH:HEX]
                    [--payload-len N] [--urg N] [--ttl N] [--frag N] [--icmp]
        prints the first answer as JSON ({"answer": null} when none came);
        with --icmp an ICMP or ICMPv6 error that quotes the probe's source
        address and port is an answer too (see icmp_answer; its flagstr is
        "icmpTYPE/CODE");
        --tcp-opts replaces the SYN's usual options (NOP-padded), --ip-opts
        are IPv4 options (END-padded), --ext IPv6 extension headers (HEX,
        each naming the next; NH the first one's number), --frag N sends
        the IPv4 datagram in fragments of N bytes (a multiple of 8)
  prober.py connect --iface IF --src A --dst B --sport S --dport P --isn N
                    [--tsval N | --no-ts] [--data-file F] [--split a,b,..]
                    [--order i,j,..] [--timeout S]
        SYN (ISN N), then on SYN-ACK: ACK and the data in segments cut at the
        split offsets, sent in the given order; prints JSON with the SYN-ACK,
        the highest ack the server sent, whether an RST came, and the bytes
        the server sent.  The caller drops this namespace's own RSTs.
  prober.py burst   --iface IF --src A --dst B --dport P --count N
        sends N malformed segments (truncated headers, bad options, bogus
        lengths, bad data offsets) and prints how many went out.
Every loop is bounded by count and time.
"""
import argparse
import ipaddress
import json
import os
import random
import struct
import time

from pktlib import (FLAGS, Wire, csum, ip_packet, parse, peer_tsval, replies, syn_options,
                    tcp_segment, tcp_set_urg, tracked, ts_option)

NAMED = {"syn": "S", "fin": "F", "null": "", "xmas": "FPU", "ack": "A", "maimon": "FA",
         "synack": "SA", "rst": "R", "psh": "PA"}


def flag_bits(spec):
    spec = NAMED.get(spec, spec)
    bits = 0
    for ch in spec.replace(",", ""):
        bits |= FLAGS[ch.upper()]
    return bits


def cmd_probe(a):
    fam = ipaddress.ip_address(a.dst).version
    w = Wire(a.iface, fam)
    flags = flag_bits(a.flags)
    if a.tcp_opts is not None:
        opts = bytes.fromhex(a.tcp_opts)
    else:
        opts = syn_options(a.tsval, not a.no_ts) if flags & FLAGS["S"] else b""
    payload = bytes((i * 7 + 3) & 0xFF for i in range(a.payload_len))
    seg = tcp_segment(a.src, a.dst, a.sport, a.dport, a.seq, a.ack, flags, opts, payload,
                      bad_csum=a.bad_csum)
    if a.urg:
        seg = tcp_set_urg(a.src, a.dst, seg, a.urg, a.bad_csum)
    ext_nh, ext = (int(a.ext.split(":")[0]), bytes.fromhex(a.ext.split(":")[1])) if a.ext \
        else (None, b"")
    w.send(a.dst, ip_packet(a.src, a.dst, seg, tos=a.tos, flowlabel=a.flowlabel, ttl=a.ttl,
                            ipopts=bytes.fromhex(a.ip_opts), ext=ext, ext_nh=ext_nh,
                            frag=a.frag))
    deadline = time.monotonic() + a.timeout
    if a.icmp:
        ans = next(tcp_or_icmp(w, a, deadline), None)
    else:
        ans = next(replies(w, a.dst, a.sport, a.dport, deadline), None)
    print(json.dumps({"answer": ans}))


def icmp_answer(ip, a):
    """ip's header fields if it is an ICMP/ICMPv6 error quoting a TCP
    segment from our a.src:a.sport to a.dst (else None): type, code, the
    answer's sender, its IP header fields but the IPv4 id (a per-destination
    counter, not comparable across two answers), whether its checksum is
    right, the quoted length, and whether the quoted destination port is
    the one probed (a NAT that was not undone in the quote shows there)."""
    v = ip[0] >> 4
    if v == 4 and len(ip) >= 20 and ip[9] == 1:
        ihl = (ip[0] & 15) * 4
        tot = struct.unpack("!H", ip[2:4])[0]
        msg = ip[ihl:tot]
        f = dict(ipver=4, tos=ip[1], totlen=tot, df=bool(ip[6] & 0x40), ttl=ip[8], proto=1,
                 ihl=ihl, ipopts=ip[20:ihl].hex(), icmp_csum_ok=csum(msg) == 0,
                 src=str(ipaddress.ip_address(ip[12:16])))
        q = msg[8:]
        if len(q) < 24 or q[0] >> 4 != 4 or q[9] != 6:
            return None
        qsrc, qdst = ipaddress.ip_address(q[12:16]), ipaddress.ip_address(q[16:20])
        qt = q[(q[0] & 15) * 4:]
    elif v == 6 and len(ip) >= 40 and ip[6] == 58:
        first = struct.unpack("!I", ip[:4])[0]
        plen = struct.unpack("!H", ip[4:6])[0]
        msg = ip[40:40 + plen]
        pseudo = ip[8:40] + struct.pack("!IxxxB", len(msg), 58)
        f = dict(ipver=6, tclass=(first >> 20) & 0xFF, flowlabel=first & 0xFFFFF, plen=plen,
                 nexthdr=58, hlim=ip[7], icmp_csum_ok=csum(pseudo + msg) == 0,
                 src=str(ipaddress.ip_address(ip[8:24])))
        q = msg[8:]
        if len(q) < 44 or q[0] >> 4 != 6 or q[6] != 6:
            return None
        qsrc, qdst = ipaddress.ip_address(q[8:24]), ipaddress.ip_address(q[24:40])
        qt = q[40:]
    else:
        return None
    if len(msg) < 8 or msg[0] not in (3, 1):  # destination unreachable
        return None
    qsport, qdport = struct.unpack("!HH", qt[:4])
    if qsrc != ipaddress.ip_address(a.src) or qdst != ipaddress.ip_address(a.dst) \
            or qsport != a.sport:
        return None
    f.update(dst=str(ipaddress.ip_address(a.src)), icmp_type=msg[0], icmp_code=msg[1],
             quoted_len=len(q), quoted_dport_ok=qdport == a.dport,
             flagstr="icmp%d/%d" % (msg[0], msg[1]))
    return f


def tcp_or_icmp(w, a, deadline):
    """The TCP answers replies() gives, and the ICMP errors icmp_answer
    takes, until the deadline."""
    peer = str(ipaddress.ip_address(a.dst))
    for ip in w.frames(deadline):
        f = parse(ip)
        if f and f["src"] == peer and f["sport"] == a.dport and f["dport"] == a.sport:
            yield f
        elif not f:
            g = icmp_answer(ip, a)
            if g:
                yield g


def cmd_connect(a):
    fam = ipaddress.ip_address(a.dst).version
    w = Wire(a.iface, fam)
    data = open(a.data_file, "rb").read() if a.data_file else b""
    cuts = [0] + [int(x) for x in a.split.split(",") if x] + [len(data)] if a.split else [0, len(data)]
    pieces = [(cuts[i], data[cuts[i]:cuts[i + 1]]) for i in range(len(cuts) - 1) if cuts[i + 1] > cuts[i]]
    order = [int(x) for x in a.order.split(",")] if a.order else list(range(len(pieces)))
    out = {"synack": None, "rst": False, "max_ack": None, "server_bytes": "", "sent": len(pieces)}
    seg = tcp_segment(a.src, a.dst, a.sport, a.dport, a.isn, 0, FLAGS["S"],
                      syn_options(a.tsval, not a.no_ts))
    deadline = time.monotonic() + a.timeout
    w.send(a.dst, ip_packet(a.src, a.dst, seg))
    srv_isn = None
    for f in replies(w, a.dst, a.sport, a.dport, deadline):
        if f["flags"] & FLAGS["R"]:
            out["rst"] = True
            break
        if f["flags"] & FLAGS["S"] and f["flags"] & FLAGS["A"]:
            out["synack"] = f
            srv_isn = f["seq"]
            break
    if srv_isn is None:
        print(json.dumps(out))
        return
    ts_opt = b"" if a.no_ts else ts_option(a.tsval + 1, peer_tsval(out["synack"]["opts"]))
    nxt_ack = (srv_isn + 1) & 0xFFFFFFFF
    ack = tcp_segment(a.src, a.dst, a.sport, a.dport, a.isn + 1, nxt_ack, FLAGS["A"], ts_opt)
    w.send(a.dst, ip_packet(a.src, a.dst, ack))
    for i in order:
        off, chunk = pieces[i]
        s = tcp_segment(a.src, a.dst, a.sport, a.dport, a.isn + 1 + off, nxt_ack,
                        FLAGS["A"] | FLAGS["P"], ts_opt, chunk)
        w.send(a.dst, ip_packet(a.src, a.dst, s))
        time.sleep(0.02)
    got = bytearray()
    for f in tracked(replies(w, a.dst, a.sport, a.dport, deadline), out, a.isn):
        payload = bytes.fromhex(f["payload"])
        if payload:
            got += payload
            # ACK what the server sent so it does not retransmit.
            nxt_ack = (f["seq"] + len(payload)) & 0xFFFFFFFF
            s = tcp_segment(a.src, a.dst, a.sport, a.dport, a.isn + 1 + len(data), nxt_ack,
                            FLAGS["A"], ts_opt)
            w.send(a.dst, ip_packet(a.src, a.dst, s))
        if out["max_ack"] == len(data) and got and a.stop_when_acked:
            break
    out["server_bytes"] = got.decode("latin-1")
    print(json.dumps(out))


def cmd_burst(a):
    fam = ipaddress.ip_address(a.dst).version
    w = Wire(a.iface, fam)
    rng = random.Random(a.seed)
    sent = 0
    deadline = time.monotonic() + 20
    kinds = ["short_tcp", "bad_doff_small", "bad_doff_big", "opt_len_zero", "opt_len_over",
             "sack_bad", "ts_short", "iplen_short", "trailing_garbage", "mss_len"]
    for i in range(a.count):
        if time.monotonic() > deadline:
            break
        k = kinds[i % len(kinds)]
        sport = rng.randrange(20000, 30000)
        seq = rng.randrange(2**32)
        if k == "short_tcp":
            seg = tcp_segment(a.src, a.dst, sport, a.dport, seq, 0, 0x02)[:12]
            pkt = ip_packet(a.src, a.dst, seg)
        elif k == "bad_doff_small":
            pkt = ip_packet(a.src, a.dst, tcp_segment(a.src, a.dst, sport, a.dport, seq, 0, 0x02, doff=3))
        elif k == "bad_doff_big":
            pkt = ip_packet(a.src, a.dst, tcp_segment(a.src, a.dst, sport, a.dport, seq, 0, 0x02, doff=15))
        elif k == "opt_len_zero":
            pkt = ip_packet(a.src, a.dst, tcp_segment(a.src, a.dst, sport, a.dport, seq, 0, 0x02,
                                                      b"\x02\x00\x05\xb4"))
        elif k == "opt_len_over":
            pkt = ip_packet(a.src, a.dst, tcp_segment(a.src, a.dst, sport, a.dport, seq, 0, 0x02,
                                                      b"\x08\x30" + bytes(6)))
        elif k == "sack_bad":
            pkt = ip_packet(a.src, a.dst, tcp_segment(a.src, a.dst, sport, a.dport, seq, 0, 0x02,
                                                      b"\x05\x07" + bytes(6)))
        elif k == "ts_short":
            pkt = ip_packet(a.src, a.dst, tcp_segment(a.src, a.dst, sport, a.dport, seq, 0, 0x02,
                                                      b"\x08\x06" + bytes(6)))
        elif k == "iplen_short":
            seg = tcp_segment(a.src, a.dst, sport, a.dport, seq, 0, 0x02, syn_options(1))
            pkt = ip_packet(a.src, a.dst, seg, ip_len=(20 if fam == 4 else 0) + 24)
        elif k == "trailing_garbage":
            seg = tcp_segment(a.src, a.dst, sport, a.dport, seq, 0, 0x02, b"\x01\x01\x01\x00")
            pkt = ip_packet(a.src, a.dst, seg + os.urandom(7))
        else:
            pkt = ip_packet(a.src, a.dst, tcp_segment(a.src, a.dst, sport, a.dport, seq, 0, 0x02,
                                                      b"\x02\x05\x05\xb4\x00\x00\x00\x00"))
        try:
            w.send(a.dst, pkt)
            sent += 1
        except OSError:
            pass
    print(json.dumps({"sent": sent}))


def cmd_flood(a):
    """Invalid SYNs from many source ports, as fast as one socket sends."""
    fam = ipaddress.ip_address(a.dst).version
    w = Wire(a.iface, fam)
    rng = random.Random(a.seed)
    pkts = []
    for i in range(min(a.count, 4096)):
        seg = tcp_segment(a.src, a.dst, 1024 + rng.randrange(60000), a.dport, rng.randrange(2**32),
                          0, FLAGS["S"], syn_options(rng.randrange(2**32)))
        pkts.append(ip_packet(a.src, a.dst, seg))
    sent = 0
    deadline = time.monotonic() + a.seconds
    send = w.tx.sendto
    addr = (a.dst, 0)
    while sent < a.count and time.monotonic() < deadline:
        for p in pkts:
            try:
                send(p, addr)
            except OSError:
                pass
        sent += len(pkts)
    print(json.dumps({"sent": sent}))


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    for name in ("probe", "connect", "burst", "flood"):
        s = sub.add_parser(name)
        s.add_argument("--iface", required=True)
        s.add_argument("--src", required=True)
        s.add_argument("--dst", required=True)
        s.add_argument("--sport", type=lambda x: int(x, 0), default=40000)
        s.add_argument("--dport", type=lambda x: int(x, 0), required=True)
        s.add_argument("--tsval", type=lambda x: int(x, 0), default=0)
        s.add_argument("--no-ts", action="store_true")
        s.add_argument("--timeout", type=float, default=2.0)
    s = sub.choices["probe"]
    s.add_argument("--seq", type=lambda x: int(x, 0), default=0x11111111)
    s.add_argument("--ack", type=lambda x: int(x, 0), default=0)
    s.add_argument("--flags", default="syn")
    s.add_argument("--tos", type=lambda x: int(x, 0), default=0)
    s.add_argument("--flowlabel", type=lambda x: int(x, 0), default=0)
    s.add_argument("--bad-csum", action="store_true")
    s.add_argument("--tcp-opts")
    s.add_argument("--ip-opts", default="")
    s.add_argument("--ext", default="")
    s.add_argument("--payload-len", type=int, default=0)
    s.add_argument("--urg", type=lambda x: int(x, 0), default=0)
    s.add_argument("--ttl", type=int, default=64)
    s.add_argument("--frag", type=int, default=0)
    s.add_argument("--icmp", action="store_true")
    s = sub.choices["connect"]
    s.add_argument("--isn", type=lambda x: int(x, 0), required=True)
    s.add_argument("--data-file")
    s.add_argument("--split", default="")
    s.add_argument("--order", default="")
    s.add_argument("--stop-when-acked", action="store_true")
    s = sub.choices["burst"]
    s.add_argument("--count", type=int, default=100)
    s.add_argument("--seed", type=int, default=1)
    s = sub.choices["flood"]
    s.add_argument("--count", type=int, default=100000)
    s.add_argument("--seconds", type=float, default=10)
    s.add_argument("--seed", type=int, default=2)
    a = p.parse_args()
    {"probe": cmd_probe, "connect": cmd_connect, "burst": cmd_burst, "flood": cmd_flood}[a.cmd](a)


if __name__ == "__main__":
    main()
