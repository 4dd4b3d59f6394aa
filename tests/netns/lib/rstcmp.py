#!/usr/bin/env python3
"""Compares two captured answers (prober.py JSON) field by field.

Usage: rstcmp.py [--silent-ok] PROTECTED.json CLOSED.json
With --silent-ok, no answer from either is equal too (exit 0, "silent").
The two answers come from different ports, so the ports and the checksums
that cover them are left out; every other IP and TCP header field must be
equal.  An IPv6 flow label is a per-connection hash under a secret key in
the kernel, so it cannot be equal across two connections: both must be set,
or both zero.  The times in an IPv4 timestamp option (RFC 791) are the
clock when each answer was made, so they are compared as "a time was
written here", not by value.  Prints the differences; exits 1 if there are
any.
"""
import json
import sys

from pktlib import options


def mask_ip_times(hexopts):
    """IPv4 options with every recorded timestamp replaced by TTTTTTTT."""
    o = bytearray.fromhex(hexopts)
    for i, kind, ln in list(options(bytes(o))):
        if kind == 68 and ln >= 4:
            ptr, flag = o[i + 2], o[i + 3] & 15
            step = 4 if flag == 0 else 8
            first = 4 if flag == 0 else 8
            j = first
            while j + 4 <= min(ptr - 1, ln):
                o[i + j:i + j + 4] = b"\xee" * 4
                j += step
    return o.hex().replace("eeeeeeee", "TTTTTTTT")


args = sys.argv[1:]
silent_ok = args[:1] == ["--silent-ok"]
if silent_ok:
    args = args[1:]
a = json.load(open(args[0]))["answer"]
b = json.load(open(args[1]))["answer"]
if silent_ok and a is None and b is None:
    print("silent")
    sys.exit(0)
if a is None or b is None:
    print("missing answer: protected=%s closed=%s" % (a is not None, b is not None))
    sys.exit(1)
skip = {"sport", "dport", "ipcsum_ok"}
diffs = []
for k in sorted(set(a) | set(b)):
    if k in skip:
        continue
    if k == "flowlabel":
        if (a[k] == 0) != (b[k] == 0):
            diffs.append("flowlabel: %#x vs %#x" % (a[k], b[k]))
        continue
    if k == "ipopts":
        if mask_ip_times(a[k]) != mask_ip_times(b.get(k, "")):
            diffs.append("ipopts: %s vs %s" % (a[k], b.get(k)))
        continue
    if a.get(k) != b.get(k):
        diffs.append("%s: %r vs %r" % (k, a.get(k), b.get(k)))
if not a.get("tcpcsum_ok") or (a.get("ipver") == 4 and not a.get("ipcsum_ok")):
    diffs.append("protected answer has a bad checksum")
for d in diffs:
    print("  differs:", d)
sys.exit(1 if diffs else 0)
