"""Byte encodings the recording and fixture scripts share (imported from their own folder)."""


def varint(n):
    """A protobuf base-128 varint."""
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)
