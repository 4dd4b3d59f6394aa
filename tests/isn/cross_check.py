#!/usr/bin/env python3
"""knock-connect isn against the known answers of docs/DESIGN.md and against model.py
(both native forms, the nonce one included).

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

    # 1b. The nonce form's known answers (docs/DESIGN.md section 2: key bytes 0..31).
    keyfile = os.path.join(tmp, "key-0-31")
    fd = os.open(keyfile, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.write(fd, base64.b64encode(bytes(range(32))) + b"\n")
    os.close(fd)
    for dst, port, now, window, nonce, want in [
            ("192.0.2.10", 22, 1700000000, 30, "0", "ce7fec00"),
            ("192.0.2.10", 22, 1700000000, 30, "0xa5", "2b5b80a5"),
            ("2001:db8::10", 2222, 1700000000, 30, "255", "7fb8dbff"),
            ("198.51.100.7", 65535, 0xffffffffffff, 60, "1", "f5eca001"),
            ("2001:db8::10", 443, 1700000000, 0, "0x42", "3c0e5d42")]:
        rc, out, err = run(["--mode", "native", "--key-file", keyfile, "--dst", dst, "--port", str(port),
                            "--time", str(now), "--window", str(window), "--nonce", nonce])
        check(rc == 0 and out == want, f"nonce known answer {dst} {nonce}: rc={rc} out={out!r} err={err!r}")

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
        # The nonce form: native, no TSval, auth only.
        nonce = rng.randrange(256) if mode == "native" and rng.random() < 0.3 else None
        if nonce is not None:
            tsval = 0
        ilen = 0 if nonce is not None else rng.choice([0, 0, 1, rng.randrange(1, 2049)])
        pl = bytes(rng.randrange(256) for _ in range(ilen + rng.randrange(8)))
        with open(payload, "wb") as f:
            f.write(pl)
        now = rng.choice([0, rng.randrange(2**31), rng.randrange(2**63)])
        window = rng.choice([0, 1, 30, rng.randrange(1, 86401)])
        args = ["--mode", mode, "--key-file", keyfile, "--dst", dst,
                "--port", rng.choice([str(port), hex(port)]),
                "--time", str(now), "--window", str(window)]
        args += ["--tsval", str(tsval)] if nonce is None else ["--nonce", str(nonce)]
        if ilen:
            args += ["--integrity-len", str(ilen), "--payload-file", payload]
        want = "%08x" % model.isn(mode, key, dst, port, tsval, pl[:ilen], now, window, nonce)
        rc, out, err = run(args)
        check(rc == 0 and out == want,
              f"case {i}: {mode} {dst} port={port} ts={tsval} nonce={nonce} ilen={ilen} t={now} "
              f"w={window}: got {out!r} want {want!r} rc={rc} err={err!r}")

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
                 ["--mode", "knock", "--dst", "192.0.2.1", "--port", "1", "--key-file", "/nonexistent"],
                 ["--mode", "knock", "--dst", "192.0.2.1", "--port", "1", "--nonce", "1"] + secret,
                 ["--mode", "native", "--dst", "192.0.2.1", "--port", "1", "--nonce", "256",
                  "--key-file", keyfile],
                 ["--mode", "native", "--dst", "192.0.2.1", "--port", "1", "--nonce", "1",
                  "--tsval", "0", "--key-file", keyfile],
                 ["--mode", "native", "--dst", "192.0.2.1", "--port", "1", "--nonce", "1",
                  "--integrity-len", "5", "--payload-file", payload, "--key-file", keyfile]]:
        rc, out, err = run(args)
        check(rc != 0 and out == "" and err.startswith(("knock-connect:", "usage:")),
              f"refused {args}: rc={rc} out={out!r} err={err!r}")
finally:
    subprocess.run(["rm", "-rf", tmp])

print(f"isn cross-check: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
