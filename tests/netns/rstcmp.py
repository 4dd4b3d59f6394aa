#!/usr/bin/env python3
"""Compares two captured answers (prober.py JSON) field by field.

Usage: rstcmp.py PROTECTED.json CLOSED.json
The two answers come from different ports, so the ports and the checksums
that cover them are left out; every other IP and TCP header field must be
equal.  An IPv6 flow label is a per-connection hash under a secret key in
the kernel, so it cannot be equal across two connections: both must be set,
or both zero.  Prints the differences; exits 1 if there are any.
"""
import json
import sys

a = json.load(open(sys.argv[1]))["answer"]
b = json.load(open(sys.argv[2]))["answer"]
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
    if a.get(k) != b.get(k):
        diffs.append("%s: %r vs %r" % (k, a.get(k), b.get(k)))
if not a.get("tcpcsum_ok") or (a.get("ipver") == 4 and not a.get("ipcsum_ok")):
    diffs.append("protected answer has a bad checksum")
for d in diffs:
    print("  differs:", d)
sys.exit(1 if diffs else 0)
