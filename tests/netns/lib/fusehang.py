#!/usr/bin/env python3
"""fusehang.py - a FUSE file that never answers one process, for the tests.

    fusehang.py MOUNTPOINT STATEFILE TARGET_PID

Mounts a one-file file system at MOUNTPOINT (root only; straight on
/dev/fuse, no libfuse) with the file "f".  Every request is answered at
once, except GETATTR and FLUSH from a thread of TARGET_PID: those are kept
unanswered, which is what a malicious FUSE server does to whoever fstat()s
or close()s one of its files.  Attributes are never cached, so every
fstat() asks.  STATEFILE gets "mounted", then one line per request kept
("held GETATTR", "held FLUSH").

SIGUSR1 answers everything held and stops holding; SIGTERM (or SIGINT)
unmounts lazily and exits, which aborts the connection: whatever still
waits on it fails with ENOTCONN.
"""
import ctypes
import errno
import os
import signal
import stat
import struct
import sys

LOOKUP, GETATTR, OPEN, RELEASE, FLUSH, INIT, INTERRUPT, DESTROY = 1, 3, 14, 18, 25, 26, 36, 38
FORGET, BATCH_FORGET = 2, 42
IN_HDR = struct.Struct("<IIQQIIIHH")    # fuse_in_header, 40 bytes
OUT_HDR = struct.Struct("<IiQ")         # fuse_out_header, 16 bytes
FILE_INO = 2
MS_NOSUID, MS_NODEV, MNT_DETACH = 2, 4, 2

libc = ctypes.CDLL(None, use_errno=True)


def attr(ino):
    mode = (stat.S_IFDIR | 0o755) if ino == 1 else (stat.S_IFREG | 0o644)
    # ino size blocks atime mtime ctime, 3 nsecs, mode nlink uid gid rdev blksize flags
    return struct.pack("<QQQQQQIIIIIIIIII", ino, 4 if ino != 1 else 0, 1, 0, 0, 0,
                       0, 0, 0, mode, 1, 0, 0, 0, 4096, 0)


class Server:
    def __init__(self, mnt, state, target):
        self.mnt, self.state, self.target = mnt, state, target
        self.held = []
        self.holding = True
        self.fd = os.open("/dev/fuse", os.O_RDWR)
        opts = "fd=%d,rootmode=40000,user_id=0,group_id=0,allow_other" % self.fd
        if libc.mount(b"fusehang", mnt.encode(), b"fuse", MS_NOSUID | MS_NODEV,
                      opts.encode()) != 0:
            sys.exit("fusehang: mount: " + os.strerror(ctypes.get_errno()))
        self.log("mounted")

    def log(self, line):
        with open(self.state, "a") as f:
            f.write(line + "\n")

    def reply(self, unique, err=0, body=b""):
        try:
            os.write(self.fd, OUT_HDR.pack(OUT_HDR.size + len(body), -err, unique) + body)
        except OSError:
            pass        # the request was interrupted or the connection is gone

    def tgid(self, tid):
        try:
            with open("/proc/%d/status" % tid) as f:
                for line in f:
                    if line.startswith("Tgid:"):
                        return int(line.split()[1])
        except OSError:
            pass
        return -1

    def release_held(self, *_):
        self.holding = False
        for unique, body in self.held:
            self.reply(unique, 0, body)
        self.held = []

    def handle(self, buf):
        _, op, unique, node, _, _, pid, _, _ = IN_HDR.unpack_from(buf)
        data = buf[IN_HDR.size:]
        if op == INIT:
            major, minor = struct.unpack_from("<II", data)
            body = struct.pack("<IIIIHHIIHHII", 7, min(minor, 31), 0, 0, 16, 12, 65536, 1,
                               0, 0, 0, 0) + bytes(24)   # fuse_init_out: 64 bytes
            self.reply(unique, 0, body)
        elif op == LOOKUP:
            if data.split(b"\0")[0] != b"f" or node != 1:
                self.reply(unique, errno.ENOENT)
            else:
                self.reply(unique, 0, struct.pack("<QQQQII", FILE_INO, 0, 0, 0, 0, 0) +
                           attr(FILE_INO))
        elif op in (GETATTR, FLUSH):
            body = struct.pack("<QII", 0, 0, 0) + attr(node) if op == GETATTR else b""
            if self.holding and self.tgid(pid) == self.target:
                self.held.append((unique, body))
                self.log("held " + ("GETATTR" if op == GETATTR else "FLUSH"))
            else:
                self.reply(unique, 0, body)
        elif op == OPEN:
            self.reply(unique, 0, struct.pack("<QIi", 1, 0, 0))
        elif op == RELEASE:
            self.reply(unique)
        elif op in (FORGET, BATCH_FORGET, INTERRUPT):
            pass        # no reply; an interrupted request stays held
        elif op == DESTROY:
            self.reply(unique)
        else:
            self.reply(unique, errno.ENOSYS)

    def run(self):
        while True:
            try:
                buf = os.read(self.fd, (1 << 20) + 4096)
            except OSError as e:
                if e.errno in (errno.ENOENT, errno.EINTR, errno.EAGAIN):
                    continue
                return      # ENODEV: unmounted
            self.handle(buf)


def main():
    server = Server(sys.argv[1], sys.argv[2], int(sys.argv[3]))

    def stop(*_):
        libc.umount2(server.mnt.encode(), MNT_DETACH)
        os._exit(0)     # closing /dev/fuse aborts the connection

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGUSR1, server.release_held)
    server.run()


if __name__ == "__main__":
    main()
