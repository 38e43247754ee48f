#!/usr/bin/env python3
"""Rewrites a pcap capture as pcapng whose interface names its time zone (the if_iana_tzname
option, code 18), in either byte order: the fixtures of the time-zone tests.

    scripts/pcapng-timezone.py IN.pcap OUT.pcapng ZONE [--big-endian]
"""
import struct
import sys


def pad(data: bytes) -> bytes:
    return data + b"\0" * (-len(data) % 4)


def main() -> None:
    src, dst, zone = sys.argv[1:4]
    e = ">" if "--big-endian" in sys.argv[4:] else "<"
    raw = open(src, "rb").read()
    magic = struct.unpack("<I", raw[:4])[0]
    le = {0xA1B2C3D4: "<", 0xD4C3B2A1: ">", 0xA1B23C4D: "<", 0x4D3CB2A1: ">"}[magic if magic in (0xA1B2C3D4, 0xA1B23C4D) else struct.unpack(">I", raw[:4])[0]]
    nano = struct.unpack(le + "I", raw[:4])[0] == 0xA1B23C4D
    snaplen, linktype = struct.unpack(le + "II", raw[16:24])

    def block(kind: int, body: bytes) -> bytes:
        length = 12 + len(body)
        return struct.pack(e + "II", kind, length) + body + struct.pack(e + "I", length)

    def option(code: int, value: bytes) -> bytes:
        return struct.pack(e + "HH", code, len(value)) + pad(value)

    out = block(0x0A0D0D0A, struct.pack(e + "IHHq", 0x1A2B3C4D, 1, 0, -1) + option(4, b"framescope scripts/pcapng-timezone.py") + option(0, b""))
    options = option(2, b"lo") + (option(9, bytes([9])) if nano else b"") + option(18, zone.encode()) + option(0, b"")
    out += block(1, struct.pack(e + "HHI", linktype, 0, snaplen) + options)
    at = 24
    while at + 16 <= len(raw):
        sec, frac, caplen, origlen = struct.unpack(le + "IIII", raw[at:at + 16])
        data = raw[at + 16:at + 16 + caplen]
        units = sec * (10**9 if nano else 10**6) + frac
        out += block(6, struct.pack(e + "IIIII", 0, units >> 32, units & 0xFFFFFFFF, caplen, origlen) + pad(data))
        at += 16 + caplen
    open(dst, "wb").write(out)


if __name__ == "__main__":
    main()
