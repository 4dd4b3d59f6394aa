#!/usr/bin/env python3
"""logsink.py - a unix datagram socket standing in for journald's or syslog's.

    logsink.py journal|syslog SOCKET OUT SECONDS

Binds SOCKET (which must not exist), then for SECONDS at most appends one
JSON line per datagram to OUT (flushed each time):

  journal  the native protocol of sd_journal_sendv(): "NAME=value\\n" fields,
           or "NAME\\n" + 64-bit little-endian length + value + "\\n" for
           binary-safe ones; a datagram that carries a memfd (SCM_RIGHTS)
           holds its fields there.  The line is the fields as an object, with
           _PID set from the sender's credentials, as journald adds it.
  syslog   the datagram's text, as glibc's syslog() sent it: {"line": ...}.

Exits 0 when SECONDS are over (or on SIGTERM).  Nothing else is made.
"""
import array
import json
import os
import signal
import socket
import struct
import sys
import time


def parse_journal(data):
    fields = {}
    i = 0
    while i < len(data):
        nl = data.find(b"\n", i)
        if nl < 0:
            break
        line = data[i:nl]
        if b"=" in line:
            name, value = line.split(b"=", 1)
            fields[name.decode()] = value.decode(errors="replace")
            i = nl + 1
        else:
            name = line.decode()
            (size,) = struct.unpack("<Q", data[nl + 1:nl + 9])
            value = data[nl + 9:nl + 9 + size]
            fields[name] = value.decode(errors="replace")
            i = nl + 9 + size + 1
    return fields


def main():
    kind, path, out, seconds = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
    sock.bind(path)
    os.chmod(path, 0o666)
    deadline = time.monotonic() + seconds
    with open(out, "a") as f:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return 0
            sock.settimeout(left)
            try:
                data, anc, _, _ = sock.recvmsg(1 << 17, socket.CMSG_SPACE(64))
            except socket.timeout:
                return 0
            pid = None
            for level, typ, cdata in anc:
                if level == socket.SOL_SOCKET and typ == socket.SCM_CREDENTIALS:
                    pid = struct.unpack("iII", cdata[:12])[0]
                elif level == socket.SOL_SOCKET and typ == socket.SCM_RIGHTS:
                    fds = array.array("i")
                    fds.frombytes(cdata[:len(cdata) - len(cdata) % fds.itemsize])
                    for fd in fds:
                        data = os.pread(fd, 1 << 20, 0)
                        os.close(fd)
            if kind == "journal":
                rec = parse_journal(data)
                if pid is not None:
                    rec["_PID"] = str(pid)
            else:
                rec = {"line": data.decode(errors="replace")}
            f.write(json.dumps(rec) + "\n")
            f.flush()


if __name__ == "__main__":
    sys.exit(main())
