#!/usr/bin/env python3
"""Raw-socket TCP prober for knockgw's namespace tests.

It sends hand-made segments with chosen ISNs, timestamps and flags, and
captures the answers whole (AF_PACKET on the given interface), so the tests
can compare every header field of an answer with a closed port's.

  prober.py probe   --iface IF --src A --dst B --sport S --dport P
                    [--seq N] [--ack N] [--flags syn|fin|null|xmas|ack|maimon|F,S,R,P,A,U]
                    [--tsval N | --no-ts] [--tos N] [--flowlabel N] [--timeout S]
                    [--bad-csum] [--tcp-opts HEX] [--ip-opts HEX] [--ext NH:HEX]
                    [--payload-len N] [--urg N] [--ttl N] [--frag N]
        prints the first answer as JSON ({"answer": null} when none came);
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
import select
import socket
import struct
import sys
import time

ETH_P_ALL = 0x0003
IPV6_HDRINCL = 36
FLAGS = {"F": 0x01, "S": 0x02, "R": 0x04, "P": 0x08, "A": 0x10, "U": 0x20, "E": 0x40, "C": 0x80}
NAMED = {"syn": "S", "fin": "F", "null": "", "xmas": "FPU", "ack": "A", "maimon": "FA",
         "synack": "SA", "rst": "R", "psh": "PA"}


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def tcp_segment(src, dst, sport, dport, seq, ack, flags, opts=b"", payload=b"", window=64240,
                doff=None, bad_csum=False):
    optlen = len(opts)
    if optlen % 4:
        opts += b"\x01" * (4 - optlen % 4)  # NOP padding
    hl = 20 + len(opts)
    d = (doff if doff is not None else hl // 4) << 4
    hdr = struct.pack("!HHIIBBHHH", sport, dport, seq & 0xFFFFFFFF, ack & 0xFFFFFFFF, d, flags,
                      window, 0, 0) + opts
    a, b = ipaddress.ip_address(src), ipaddress.ip_address(dst)
    seglen = len(hdr) + len(payload)
    if a.version == 4:
        pseudo = a.packed + b.packed + struct.pack("!BBH", 0, 6, seglen)
    else:
        pseudo = a.packed + b.packed + struct.pack("!IxxxB", seglen, 6)
    c = csum(pseudo + hdr + payload)
    if bad_csum:
        c ^= 0x5555
    return hdr[:16] + struct.pack("!H", c) + hdr[18:] + payload


def tcp_set_urg(src, dst, seg, urg, bad_csum=False):
    """seg with its urgent pointer set, the checksum recomputed."""
    seg = seg[:16] + b"\0\0" + struct.pack("!H", urg) + seg[20:]
    a, b = ipaddress.ip_address(src), ipaddress.ip_address(dst)
    if a.version == 4:
        pseudo = a.packed + b.packed + struct.pack("!BBH", 0, 6, len(seg))
    else:
        pseudo = a.packed + b.packed + struct.pack("!IxxxB", len(seg), 6)
    c = csum(pseudo + seg) ^ (0x5555 if bad_csum else 0)
    return seg[:16] + struct.pack("!H", c) + seg[18:]


def ip_packet(src, dst, segment, tos=0, flowlabel=0, ttl=64, proto=6, ip_len=None, ipopts=b"",
              ext=b"", ext_nh=None, frag=0):
    a = ipaddress.ip_address(src)
    if a.version == 4:
        if len(ipopts) % 4:
            ipopts += b"\0" * (4 - len(ipopts) % 4)  # END padding
        ihl = 20 + len(ipopts)
        ident = random.randrange(1, 65536)
        if frag:
            return ip_fragments(a, dst, segment, tos, ttl, proto, ipopts, ident, frag)
        tot = ip_len if ip_len is not None else ihl + len(segment)
        h = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl // 4, tos, tot, ident, 0x4000, ttl,
                        proto, 0, a.packed, ipaddress.ip_address(dst).packed) + ipopts
        h = h[:10] + struct.pack("!H", csum(h)) + h[12:]
        return h + segment
    plen = ip_len if ip_len is not None else len(ext) + len(segment)
    first = (6 << 28) | (tos << 20) | (flowlabel & 0xFFFFF)
    return struct.pack("!IHBB16s16s", first, plen, ext_nh if ext else proto, ttl, a.packed,
                       ipaddress.ip_address(dst).packed) + ext + segment


def ip_fragments(a, dst, payload, tos, ttl, proto, ipopts, ident, size):
    """An IPv4 datagram cut into fragments of size bytes (RFC 791 3.2)."""
    out = []
    for off in range(0, len(payload), size):
        chunk = payload[off:off + size]
        mf = 0x2000 if off + size < len(payload) else 0
        opts = ipopts if off == 0 else b""  # no copied-flag options here
        ihl = 20 + len(opts)
        h = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl // 4, tos, ihl + len(chunk), ident,
                        mf | off // 8, ttl, proto, 0, a.packed,
                        ipaddress.ip_address(dst).packed) + opts
        out.append(h[:10] + struct.pack("!H", csum(h)) + h[12:] + chunk)
    return out


def syn_options(tsval, with_ts=True):
    if with_ts:
        # Linux order: MSS, SACK_PERM, TS, NOP, WS
        return (struct.pack("!BBH", 2, 4, 1460) + b"\x04\x02" +
                struct.pack("!BBII", 8, 10, tsval, 0) + b"\x01" + b"\x03\x03\x07")
    return struct.pack("!BBH", 2, 4, 1460) + b"\x01\x01\x04\x02" + b"\x01\x03\x03\x07"


class Wire:
    """A raw IP sender and an AF_PACKET capture on one interface."""

    def __init__(self, iface, family):
        self.family = family
        self.cap = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        self.cap.bind((iface, 0))
        self.cap.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        if family == 4:
            self.tx = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
        else:
            self.tx = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_RAW)
            self.tx.setsockopt(socket.IPPROTO_IPV6, IPV6_HDRINCL, 1)

    def send(self, dst, pkt):
        for p in pkt if isinstance(pkt, list) else [pkt]:
            self.tx.sendto(p, (dst, 0))

    def frames(self, deadline):
        """Yields (pkttype, ip packet) until the deadline."""
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            r, _, _ = select.select([self.cap], [], [], left)
            if not r:
                return
            data, addr = self.cap.recvfrom(65535)
            # addr[2] is the packet type: 4 = outgoing, skip our own.
            if addr[2] == socket.PACKET_OUTGOING:
                continue
            eth = struct.unpack("!H", data[12:14])[0]
            if eth in (0x0800, 0x86DD):
                yield data[14:]


def parse(ip):
    """Every header field of an IPv4/IPv6 + TCP packet, as a dict."""
    f = {}
    v = ip[0] >> 4
    if v == 4:
        ihl = (ip[0] & 15) * 4
        f.update(ipver=4, tos=ip[1], totlen=struct.unpack("!H", ip[2:4])[0],
                 id=struct.unpack("!H", ip[4:6])[0], df=bool(ip[6] & 0x40), mf=bool(ip[6] & 0x20),
                 fragoff=struct.unpack("!H", ip[6:8])[0] & 0x1FFF, ttl=ip[8], proto=ip[9],
                 ihl=ihl, ipcsum_ok=csum(ip[:ihl]) == 0, ipopts=ip[20:ihl].hex(),
                 src=str(ipaddress.ip_address(ip[12:16])), dst=str(ipaddress.ip_address(ip[16:20])))
        seg = ip[ihl:f["totlen"]]
        pseudo = ip[12:20] + struct.pack("!BBH", 0, 6, len(seg))
    elif v == 6:
        first = struct.unpack("!I", ip[:4])[0]
        plen = struct.unpack("!H", ip[4:6])[0]
        f.update(ipver=6, tclass=(first >> 20) & 0xFF, flowlabel=first & 0xFFFFF, plen=plen,
                 nexthdr=ip[6], hlim=ip[7], src=str(ipaddress.ip_address(ip[8:24])),
                 dst=str(ipaddress.ip_address(ip[24:40])))
        if ip[6] != 6:
            return None
        seg = ip[40:40 + plen]
        pseudo = ip[8:40] + struct.pack("!IxxxB", len(seg), 6)
    else:
        return None
    if v == 4 and f["proto"] != 6:
        return None
    if len(seg) < 20:
        return None
    sport, dport, seq, ack, off, flags, win, _, urg = struct.unpack("!HHIIBBHHH", seg[:20])
    doff = (off >> 4) * 4
    f.update(sport=sport, dport=dport, seq=seq, ack=ack, doff=doff, res=off & 15, flags=flags,
             flagstr="".join(k for k, b in FLAGS.items() if flags & b), win=win, urg=urg,
             opts=seg[20:doff].hex(), payload=seg[doff:].hex(), tcpcsum_ok=csum(pseudo + seg) == 0)
    return f


def peer_tsval(opts_hex):
    """The TSval of a TCP option list, for our TSecr (RFC 7323); 0 if none."""
    o = bytes.fromhex(opts_hex)
    i = 0
    while i < len(o):
        if o[i] == 0:
            break
        if o[i] == 1:
            i += 1
            continue
        if i + 1 >= len(o) or o[i + 1] < 2:
            break
        if o[i] == 8 and o[i + 1] == 10 and i + 10 <= len(o):
            return struct.unpack("!I", o[i + 2:i + 6])[0]
        i += o[i + 1]
    return 0


def flag_bits(spec):
    spec = NAMED.get(spec, spec)
    bits = 0
    for ch in spec.replace(",", ""):
        bits |= FLAGS[ch.upper()]
    return bits


def answers(wire, a, deadline):
    for ip in wire.frames(deadline):
        f = parse(ip)
        if f and f["src"] == str(ipaddress.ip_address(a.dst)) and f["sport"] == a.dport and \
                f["dport"] == a.sport:
            yield f


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
    ans = next(answers(w, a, time.monotonic() + a.timeout), None)
    print(json.dumps({"answer": ans}))


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
    for f in answers(w, a, deadline):
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
    ts_opt = b"" if a.no_ts else b"\x01\x01" + struct.pack("!BBII", 8, 10, a.tsval + 1,
                                                            peer_tsval(out["synack"]["opts"]))
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
    for f in answers(w, a, deadline):
        if f["flags"] & FLAGS["R"]:
            out["rst"] = True
            break
        if f["flags"] & FLAGS["A"]:
            rel = (f["ack"] - a.isn - 1) & 0xFFFFFFFF
            if out["max_ack"] is None or rel > out["max_ack"]:
                out["max_ack"] = rel
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
