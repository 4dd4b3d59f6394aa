#!/usr/bin/env python3
"""An independent model of the ISN formats (docs/DESIGN.md section 2), for cross-checking knock-connect.

Mode "knock": the MD5 compression step is written here from RFC 1321 (the
round functions and the sine table are computed, not copied), and checked
against hashlib on a padded block before use.  Mode "native": composed from
libsodium's primitives through ctypes, so only the formats' composition (the
layout of M, the byte orders, the truncations) is modelled, independently of
the C code.
"""
import ctypes
import ctypes.util
import hashlib
import ipaddress
import math
import struct

_S = [7, 12, 17, 22] * 4 + [5, 9, 14, 20] * 4 + [4, 11, 16, 23] * 4 + [6, 10, 15, 21] * 4
_K = [int(abs(math.sin(i + 1)) * 2**32) & 0xFFFFFFFF for i in range(64)]
_M32 = 0xFFFFFFFF


def _rol(x, c):
    return ((x << c) | (x >> (32 - c))) & _M32


def md5_compress(state, block):
    m = struct.unpack("<16I", block)
    a, b, c, d = state
    for i in range(64):
        if i < 16:
            f, g = (b & c) | (~b & d), i
        elif i < 32:
            f, g = (d & b) | (~d & c), (5 * i + 1) % 16
        elif i < 48:
            f, g = b ^ c ^ d, (3 * i + 5) % 16
        else:
            f, g = c ^ (b | (~d & _M32)), (7 * i) % 16
        f = (f + a + _K[i] + m[g]) & _M32
        a, d, c = d, c, b
        b = (b + _rol(f, _S[i])) & _M32
    return [(x + y) & _M32 for x, y in zip(state, (a, b, c, d))]


# The model must agree with hashlib before anyone trusts it.
_H0 = [0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476]
assert struct.pack("<4I", *md5_compress(_H0, b"\x80" + bytes(63))).hex() == hashlib.md5(b"").hexdigest()


def _addr16(dst):
    a = ipaddress.ip_address(dst)
    return a.packed if a.version == 6 else bytes(10) + b"\xff\xff" + a.packed


def knock_ih(secret, payload):
    h = hashlib.md5(secret.ljust(64, b"\0") + payload).digest()
    ih = 0
    for i in range(0, 16, 2):
        ih ^= struct.unpack(">H", h[i:i + 2])[0]
    return ih


def knock_av(secret, dst, port, tsval, ih):
    iv = bytearray(16)
    packed = ipaddress.ip_address(dst).packed
    iv[: len(packed)] = packed
    for i, b in enumerate(struct.pack(">H", ih)):
        iv[4 + i] ^= b
    for i, b in enumerate(struct.pack(">I", tsval)):
        iv[8 + i] ^= b
    for i, b in enumerate(struct.pack(">H", port)):
        iv[12 + i] ^= b
    w = md5_compress(list(struct.unpack("<4I", bytes(iv))), secret.ljust(64, b"\0"))
    return w[0] ^ w[1] ^ w[2] ^ w[3]


_sodium = ctypes.CDLL(ctypes.util.find_library("sodium") or "libsodium.so.23")
assert _sodium.sodium_init() >= 0


def _kdf(key, subkey_id, length):
    out = ctypes.create_string_buffer(length)
    rc = _sodium.crypto_kdf_derive_from_key(out, ctypes.c_size_t(length), ctypes.c_uint64(subkey_id),
                                            ctypes.c_char_p(b"knockgw1"), ctypes.c_char_p(key))
    assert rc == 0
    return out.raw


def _native_m(dst, port, tsval, epoch):
    return _addr16(dst) + struct.pack(">HIQ", port, tsval, epoch)


def native_ih(key, dst, port, tsval, epoch, payload):
    out = ctypes.create_string_buffer(16)
    k_ih = _kdf(key, 2, 32)
    msg = _native_m(dst, port, tsval, epoch) + payload
    assert _sodium.crypto_generichash(out, ctypes.c_size_t(16), msg, ctypes.c_ulonglong(len(msg)),
                                      k_ih, ctypes.c_size_t(32)) == 0
    return struct.unpack(">H", out.raw[:2])[0]


def native_av(key, dst, port, tsval, epoch, ih):
    out = ctypes.create_string_buffer(8)
    k_av = _kdf(key, 1, 16)
    msg = _native_m(dst, port, tsval, epoch) + struct.pack(">H", ih)
    assert _sodium.crypto_shorthash(out, msg, ctypes.c_ulonglong(len(msg)), k_av) == 0
    return struct.unpack(">I", out.raw[:4])[0]


def native_nonce(key, dst, port, epoch, nonce):
    """The nonce form (native, auth only, no TCP timestamp): 24 bits of MAC, then the nonce."""
    out = ctypes.create_string_buffer(8)
    k_nv = _kdf(key, 3, 16)
    msg = _native_m(dst, port, 0, epoch) + bytes([nonce])
    assert _sodium.crypto_shorthash(out, msg, ctypes.c_ulonglong(len(msg)), k_nv) == 0
    return (struct.unpack(">I", out.raw[:4])[0] & 0xFFFFFF00) | nonce


def isn(mode, key, dst, port, tsval=0, payload=b"", now=0, window=30, nonce=None):
    """The ISN of docs/DESIGN.md section 2; payload non-empty means integrity mode;
    a nonce (0..255) means the native nonce form."""
    if nonce is not None:
        return native_nonce(key, dst, port, now // window if window else 0, nonce)
    if mode == "knock":
        ih = knock_ih(key, payload) if payload else 0
        av = knock_av(key, dst, port, tsval, ih)
    else:
        epoch = now // window if window else 0
        ih = native_ih(key, dst, port, tsval, epoch, payload) if payload else 0
        av = native_av(key, dst, port, tsval, epoch, ih)
    return (av & 0xFFFF0000) | ih if payload else av
