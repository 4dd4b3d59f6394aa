#!/usr/bin/env python3
"""A TCP service that keeps what it reads, for the namespace tests.

  sink.py PORT OUTFILE

listens on PORT (IPv4 and IPv6) and appends every byte any connection
delivers to OUTFILE as soon as it arrives, so a test can tell exactly what
reached the service.  Runs until killed; one thread per connection.
"""
import socket
import sys
import threading


def serve(conn, out, lock):
    with conn:
        while True:
            try:
                data = conn.recv(65536)
            except OSError:
                return
            if not data:
                return
            with lock:
                out.write(data)
                out.flush()


def main():
    port, path = int(sys.argv[1]), sys.argv[2]
    lock = threading.Lock()
    out = open(path, "ab")
    s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    s.bind(("::", port))
    s.listen(128)
    while True:
        conn, _ = s.accept()
        threading.Thread(target=serve, args=(conn, out, lock), daemon=True).start()


if __name__ == "__main__":
    main()
