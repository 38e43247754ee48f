#!/usr/bin/env python3
"""Writes Tests/FramescopeCaptureTests/Fixtures/protobuf-differential.json: message bodies made by
mutating valid Envelopes of samples/proto/chat.proto (bytes flipped, cut, inserted, repeated,
length bytes bent), each with what Google's protobuf library says of it: whether it parses as
wire data (an empty message: every field unknown but well-formed) and as an Envelope.
The tests hold framescope's streaming check to the same verdicts.
Needs protoc and the protobuf Python package. Usage: scripts/protobuf-differential.py [COUNT]"""
import json, os, random, subprocess, sys, tempfile
from wire import varint

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
OUT = os.path.join(ROOT, "Tests", "FramescopeCaptureTests", "Fixtures", "protobuf-differential.json")


def envelope(rng):
    out = b""
    if rng.random() < 0.8:
        out += b"\x08" + varint(rng.randrange(6))
    if rng.random() < 0.8:
        out += b"\x10" + varint(rng.randrange(1 << rng.choice([7, 14, 35, 63])))
    if rng.random() < 0.6:
        text = rng.choice(["hi", "héllo", "你好", "😀 ok", "x" * 40]).encode()
        out += b"\x1a" + varint(len(text)) + text
    if rng.random() < 0.4:
        name = rng.choice([b"a.jpg", "ß.png".encode(), b""])
        data = bytes(rng.randrange(256) for _ in range(rng.randrange(12)))
        inner = b"\x0a" + varint(len(name)) + name + b"\x12" + varint(len(data)) + data
        out += b"\x22" + varint(len(inner)) + inner
    if rng.random() < 0.3:
        out += b"\x29" + bytes(rng.randrange(256) for _ in range(8))
    if rng.random() < 0.15:  # unknown fields: varint, fixed32, a group
        out += rng.choice([b"\x30\x01", b"\x3d\x01\x02\x03\x04", b"\x43\x08\x01\x44", b"\x4a\x00"])
    return out


def mutate(rng, body):
    b = bytearray(body)
    for _ in range(rng.choice([0, 1, 1, 2, 3])):
        kind = rng.randrange(6)
        if kind == 0 and b:
            b[rng.randrange(len(b))] = rng.randrange(256)
        elif kind == 1 and b:
            del b[rng.randrange(len(b)):]
        elif kind == 2:
            b[rng.randrange(len(b) + 1):0] = bytes([rng.choice([0x80, 0xff, 0xc3, 0xed, 0x0b, 0x0c, 0x07, 0x00, rng.randrange(256)])])
        elif kind == 3 and b:
            i = rng.randrange(len(b))
            b[i] ^= 1 << rng.randrange(8)
        elif kind == 4:
            b += bytes([0x80] * rng.randrange(1, 11)) + b"\x01"
        elif kind == 5 and b:
            i = rng.randrange(len(b))
            b[i:i] = b[i:i + rng.randrange(1, 6)]
    return bytes(b)


def main():
    from google.protobuf import descriptor_pb2, empty_pb2, message_factory
    from google.protobuf.message import DecodeError
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 600
    with tempfile.NamedTemporaryFile(suffix=".pb") as out:
        proto = os.path.join(ROOT, "samples", "proto")
        subprocess.run(["protoc", "--descriptor_set_out=" + out.name, "--include_imports", "-I", proto,
                        os.path.join(proto, "chat.proto")], check=True)
        files = descriptor_pb2.FileDescriptorSet.FromString(open(out.name, "rb").read()).file
    Envelope = message_factory.GetMessages(files)["framescope.samples.Envelope"]

    def parses(cls, body):
        try:
            cls.FromString(body)
            return True
        except DecodeError:
            return False

    rng = random.Random(20261121)
    cases, seen = [], set()
    while len(cases) < count:
        body = mutate(rng, envelope(rng))
        if body in seen:
            continue
        seen.add(body)
        cases.append({"body": body.hex(), "wire": parses(empty_pb2.Empty, body), "envelope": parses(Envelope, body)})
    import google.protobuf
    with open(OUT, "w") as f:
        json.dump({"generated_by": "scripts/protobuf-differential.py, protobuf " + google.protobuf.__version__, "cases": cases}, f, indent=0)
        f.write("\n")
    print(OUT, len(cases), "cases;", sum(c["wire"] for c in cases), "wire-valid;", sum(c["envelope"] for c in cases), "valid Envelopes")


main()
