#!/usr/bin/env python3
"""A NOTIFY_SOCKET of the test's own: records every sd_notify datagram.

Usage: notify_listen.py SOCKET_PATH OUT_FILE SECONDS [DGRAM_FILE]
Each datagram's lines are appended to OUT_FILE, one per line, as they come;
with DGRAM_FILE, each datagram also goes there whole, as one JSON string a
line (what systemd takes at once: READY=1 and STATUS= in one message).
Stops after SECONDS (bounded, like every generator in the tests).
"""
import json
import os
import socket
import sys
import time

path, out, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
os.chmod(path, 0o666)
dgram = open(sys.argv[4], "a", buffering=1) if len(sys.argv) > 4 else None
deadline = time.monotonic() + seconds
with open(out, "a", buffering=1) as f:
    while time.monotonic() < deadline:
        s.settimeout(max(0.05, deadline - time.monotonic()))
        try:
            data = s.recv(65536)
        except socket.timeout:
            continue
        if dgram:
            dgram.write(json.dumps(data.decode(errors="replace")) + "\n")
        for line in data.decode(errors="replace").splitlines():
            f.write(line + "\n")
