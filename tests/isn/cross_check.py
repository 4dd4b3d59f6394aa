#!/usr/bin/env python3
"""knock-connect isn against the known answers of docs/DESIGN.md and against model.py.

Usage: cross_check.py BUILD_DIR [CASES]
Prints one line per failure, then "N passed, N failed"; exits 1 on failure.
"""
import base64
import os
import random
import subprocess
import sys
import tempfile

import model

build = sys.argv[1] if len(sys.argv) > 1 else "build"
cases = int(sys.argv[2]) if len(sys.argv) > 2 else 300
kc = os.path.join(build, "knock-connect")
passed = failed = 0


def run(args):
    p = subprocess.run([kc, "isn"] + args, capture_output=True, text=True, timeout=10)
    return p.returncode, p.stdout.strip(), p.stderr.strip()


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("not ok:", what)


tmp = tempfile.mkdtemp(prefix="kgw-isn-")
try:
    # 1. The four known answers of docs/DESIGN.md section 2, called as knock-connect(1) documents.
    payload = os.path.join(tmp, "payload")
    with open(payload, "wb") as f:
        f.write(b"Protected payload goes here.")
    for dst, ilen, want in [("192.18.42.42", 0, "edea1325"), ("192.18.42.42", 28, "2153ff96"),
                            ("2001:db8::2a:2a", 0, "4923a842"), ("2001:db8::2a:2a", 28, "3ae5ff96")]:
        args = ["--mode", "knock", "--secret", "Magic secret string", "--dst", dst, "--port", "4242",
                "--tsval", "0x11223344"]
        if ilen:
            args += ["--integrity-len", str(ilen), "--payload-file", payload]
        rc, out, err = run(args)
        check(rc == 0 and out == want, f"known answer {dst} ilen={ilen}: rc={rc} out={out!r} err={err!r}")

    # 2. Random inputs against the independent model.
    rng = random.Random(20261203)
    for i in range(cases):
        mode = rng.choice(["knock", "native"])
        if rng.random() < 0.5:
            dst = "192.0.2.%d" % rng.randrange(256) if rng.random() < 0.5 else \
                ".".join(str(rng.randrange(256)) for _ in range(4))
        else:
            dst = "2001:db8::%x:%x" % (rng.randrange(65536), rng.randrange(65536)) \
                if rng.random() < 0.5 else ":".join("%x" % rng.randrange(65536) for _ in range(8))
        port = rng.randrange(1, 65536)
        tsval = rng.choice([0, rng.randrange(2**32), 2**32 - 1])
        key = bytes(rng.randrange(256) for _ in range(32 if mode == "native" else rng.randrange(1, 65)))
        keyfile = os.path.join(tmp, "key%d" % i)
        fd = os.open(keyfile, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.write(fd, base64.b64encode(key) + b"\n")
        os.close(fd)
        ilen = rng.choice([0, 0, 1, rng.randrange(1, 2049)])
        pl = bytes(rng.randrange(256) for _ in range(ilen + rng.randrange(8)))
        with open(payload, "wb") as f:
            f.write(pl)
        now = rng.choice([0, rng.randrange(2**31), rng.randrange(2**63)])
        window = rng.choice([0, 1, 30, rng.randrange(1, 86401)])
        args = ["--mode", mode, "--key-file", keyfile, "--dst", dst,
                "--port", rng.choice([str(port), hex(port)]), "--tsval", str(tsval),
                "--time", str(now), "--window", str(window)]
        if ilen:
            args += ["--integrity-len", str(ilen), "--payload-file", payload]
        want = "%08x" % model.isn(mode, key, dst, port, tsval, pl[:ilen], now, window)
        rc, out, err = run(args)
        check(rc == 0 and out == want,
              f"case {i}: {mode} {dst} port={port} ts={tsval} ilen={ilen} t={now} w={window}: "
              f"got {out!r} want {want!r} rc={rc} err={err!r}")

    # 3. Bad invocations are refused with a message, never a crash.
    secret = ["--secret", "s"]
    with open(payload, "wb") as f:
        f.write(b"0123456789")
    for args in [[], ["--mode", "knock"] + secret + ["--port", "1"],
                 ["--mode", "bogus", "--dst", "192.0.2.1", "--port", "1"] + secret,
                 ["--mode", "knock", "--dst", "192.0.2.1", "--port", "65536"] + secret,
                 ["--mode", "knock", "--dst", "192.0.2.1", "--port", "-1"] + secret,
                 ["--mode", "knock", "--dst", "192.0.2.1", "--port", "012x"] + secret,
                 ["--mode", "knock", "--dst", "192.0.2.1", "--port", "1", "--tsval", "0x100000000"] + secret,
                 ["--mode", "knock", "--dst", "192.0.2.300", "--port", "1"] + secret,
                 ["--mode", "native", "--dst", "192.0.2.1", "--port", "1"] + secret,
                 ["--mode", "knock", "--dst", "192.0.2.1", "--port", "1", "--secret", "x" * 65],
                 ["--mode", "knock", "--dst", "192.0.2.1", "--port", "1", "--integrity-len", "5"] + secret,
                 ["--mode", "knock", "--dst", "192.0.2.1", "--port", "1", "--integrity-len", "500",
                  "--payload-file", payload] + secret,
                 ["--mode", "knock", "--dst", "192.0.2.1", "--port", "1", "--key-file", "/nonexistent"]]:
        rc, out, err = run(args)
        check(rc != 0 and out == "" and err.startswith(("knock-connect:", "usage:")),
              f"refused {args}: rc={rc} out={out!r} err={err!r}")
finally:
    subprocess.run(["rm", "-rf", tmp])

print(f"isn cross-check: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
