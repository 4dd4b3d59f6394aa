"""Packets for knockgw's namespace tools: TCP segments and IPv4/IPv6
packets built by hand, a raw sender with an AF_PACKET capture (Wire), the
parse of a captured answer into its header fields, and the walk of an
option list.  prober.py, mitm.py, synburst.py and rstcmp.py share them.
Nothing here loops without a bound: captures stop at their deadline.
"""
import ipaddress
import random
import select
import socket
import struct
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


def options(o):
    """(offset, kind, length) of each option of a TCP or IPv4 option list
    (bytes).  END ends the list, NOP is one byte; a length that cannot be
    (below 2, or no length byte) ends the walk: nothing after it is read."""
    i = 0
    while i < len(o):
        if o[i] == 0:
            return
        if o[i] == 1:
            i += 1
            continue
        if i + 1 >= len(o) or o[i + 1] < 2:
            return
        yield i, o[i], o[i + 1]
        i += o[i + 1]


def peer_tsval(opts_hex):
    """The TSval of a TCP option list, for our TSecr (RFC 7323); 0 if none."""
    o = bytes.fromhex(opts_hex)
    for i, kind, ln in options(o):
        if kind == 8 and ln == 10 and i + 10 <= len(o):
            return struct.unpack("!I", o[i + 2:i + 6])[0]
    return 0


def ts_option(tsval, tsecr):
    """NOP, NOP, timestamps: the option list of a segment after the SYN."""
    return b"\x01\x01" + struct.pack("!BBII", 8, 10, tsval & 0xFFFFFFFF, tsecr)


def replies(wire, peer, sport, dport, deadline):
    """The segments peer sends from port dport to our sport until the
    deadline (parse's dicts)."""
    peer = str(ipaddress.ip_address(peer))
    for ip in wire.frames(deadline):
        f = parse(ip)
        if f and f["src"] == peer and f["sport"] == dport and f["dport"] == sport:
            yield f


def tracked(segs, out, isn):
    """segs passed on, with out["max_ack"] the highest ack seen (as bytes
    acknowledged past isn + 1; an ack below that is not counted) and
    out["rst"] set at an RST, which ends them."""
    for f in segs:
        if f["flags"] & FLAGS["R"]:
            out["rst"] = True
            return
        if f["flags"] & FLAGS["A"]:
            rel = (f["ack"] - isn - 1) & 0xFFFFFFFF
            if rel < 1 << 31 and (out["max_ack"] is None or rel > out["max_ack"]):
                out["max_ack"] = rel
        yield f
