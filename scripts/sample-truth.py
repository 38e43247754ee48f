#!/usr/bin/env python3
"""Writes samples/truth.json, the oracle the sample tests compare with. For every sample and
TCP stream direction it records, from tshark's "follow TCP stream" output:
- the byte count and sha256 of the reassembled stream;
- a framing walk over those bytes, independent of framescope: messages, partial messages
  (bytes in >= 2 follow segments), merged segments (bytes of >= 2 messages), naive-reader loss,
  malformed headers (with a magic, the walk scans to the next magic and counts the bytes skipped),
  and trailing incomplete bytes.
For varint-framed samples it also parses every message body with Google's protobuf library:
as wire data (an empty message type, so every field is unknown but must be well-formed) and, where
the sample has a schema, as its type, counting valid bodies by the count field.
Needs tshark, protoc and the protobuf Python package. Usage: scripts/sample-truth.py"""
import binascii, bisect, glob, hashlib, json, os, subprocess, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLES = os.path.join(HERE, "..", "samples")

# How each sample frames its messages; "spec" is the framescope SPEC the tests use.
FRAMING = {
    "im-varint.pcap": {"spec": "varint", "kind": "varint"},
    "im-varint-ipv6.pcap": {"spec": "varint", "kind": "varint"},
    "im-protobuf.pcap": {"spec": "varint", "kind": "varint",
                         "schema": {"proto": "chat.proto", "message": "framescope.samples.Envelope", "countBy": "cmd"}},
    "lines-crlf.pcap": {"spec": "delimiter", "kind": "delimiter", "delimiter": b"\r\n"},
    "seed-0xff-command.pcap": {"spec": "length:offset=4,width=4,magic=000000ff,type=8:4", "kind": "length", "offset": 4, "width": 4, "add": 8, "magic": b"\0\0\0\xff", "ascii": False},
    "seed-7byte-header.pcap": {"spec": "length:offset=5,width=2,type=2:2", "kind": "length", "offset": 5, "width": 2, "add": 7, "ascii": False},
    "seed-ascii10-header.pcap": {"spec": "length:offset=6,width=4,encoding=ascii", "kind": "length", "offset": 6, "width": 4, "add": 10, "ascii": True},
    "seed-v01-header.pcap": {"spec": "length:offset=4,width=8,encoding=ascii,adjust=-12,magic=56302e31,type=12:8", "kind": "length", "offset": 4, "width": 8, "add": 0, "magic": b"V0.1", "ascii": True},
    "seed-8byte-header.pcap": {"spec": "length:offset=4,width=4", "kind": "length", "offset": 4, "width": 4, "add": 8, "ascii": False},
}


def follow(path, stream):
    out = subprocess.run(["tshark", "-r", path, "-q", "-d", "tcp.port==0-65535,data", "-z", "follow,tcp,raw,%d" % stream],
                         capture_output=True, text=True, check=True).stdout
    nodes, records = {}, {0: [], 1: []}
    body = False
    for line in out.splitlines():
        if line.startswith("Node 0:") or line.startswith("Node 1:"):
            nodes[int(line[5])] = line.split(": ", 1)[1].strip()
            body = True
            continue
        if not body or not line.strip() or line.startswith("="):
            continue
        records[1 if line.startswith("\t") else 0].append(binascii.unhexlify(line.strip()))
    return nodes, records


def frame_length(f, buf, off):
    """Total length of the frame at off, None if incomplete, -1 if malformed."""
    n = len(buf)
    if f["kind"] == "varint":
        value, shift = 0, 0
        for i in range(5):
            if off + i >= n:
                return None
            b = buf[off + i]
            value |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return i + 1 + value
        return -1
    if f["kind"] == "delimiter":
        i = buf.find(f["delimiter"], off)
        return None if i < 0 else i + len(f["delimiter"]) - off
    magic = f.get("magic", b"")
    if buf[off:off + len(magic)] != magic[:max(0, min(len(magic), n - off))]:
        return -1
    o, w = f["offset"], f["width"]
    if off + o + w > n:
        return None
    field = buf[off + o:off + o + w]
    if f["ascii"]:
        if not field.isdigit():
            return -1
        value = int(field)
    else:
        value = int.from_bytes(field, "big")
    total = value + f["add"]
    return total if total >= o + w else -1


def walk(f, buf):
    pdus, malformed, skipped, off = [], 0, 0, 0
    while off < len(buf):
        L = frame_length(f, buf, off)
        if L is None:
            break
        if L == -1:
            malformed += 1
            nxt = buf.find(f["magic"], off + 1) if f.get("magic") else -1
            if nxt < 0:
                skipped += len(buf) - off
                off = len(buf)
                break
            skipped += nxt - off
            off = nxt
            continue
        if off + L > len(buf):
            break
        pdus.append((off, L))
        off += L
    return pdus, malformed, skipped, len(buf) - off


def stats(pdus, segment_lengths):
    starts, pos = [], 0
    for length in segment_lengths:
        starts.append(pos)
        pos += length
    touching = [0] * len(starts)
    partial = naive = 0
    for start, length in pdus:
        a = bisect.bisect_right(starts, start) - 1
        b = bisect.bisect_right(starts, start + length - 1) - 1
        if a != b:
            partial += 1
        if not (a == b and starts[a] == start):
            naive += 1
        for k in range(a, b + 1):
            touching[k] += 1
    return partial, sum(1 for t in touching if t >= 2), naive


def body_start(f, buf, off):
    """Where the body of the varint frame at off starts."""
    i = off
    while buf[i] & 0x80:
        i += 1
    return i + 1


def schema_type(schema):
    """The message class of a sample's schema, compiled from samples/proto by protoc."""
    from google.protobuf import descriptor_pb2, message_factory
    with tempfile.NamedTemporaryFile(suffix=".pb") as out:
        proto_dir = os.path.join(SAMPLES, "proto")
        subprocess.run(["protoc", "--descriptor_set_out=" + out.name, "--include_imports", "-I", proto_dir,
                        os.path.join(proto_dir, schema["proto"])], check=True)
        files = descriptor_pb2.FileDescriptorSet.FromString(open(out.name, "rb").read()).file
    return message_factory.GetMessages(files)[schema["message"]]


def protobuf_truth(f, buf, pdus):
    from google.protobuf import empty_pb2
    from google.protobuf.message import DecodeError
    def parses(cls, body):
        try:
            return cls.FromString(body)
        except DecodeError:
            return None
    bodies = [buf[body_start(f, buf, off):off + length] for off, length in pdus]
    out = {"wireInvalid": sum(1 for b in bodies if parses(empty_pb2.Empty, b) is None)}
    if "schema" in f:
        cls = schema_type(f["schema"])
        counts = {}
        invalid = 0
        for b in bodies:
            m = parses(cls, b)
            if m is None:
                invalid += 1
                continue
            field = cls.DESCRIPTOR.fields_by_name[f["schema"]["countBy"]]
            value = getattr(m, field.name)
            label = field.enum_type.values_by_number[value].name if field.enum_type and value in field.enum_type.values_by_number else str(value)
            counts[label] = counts.get(label, 0) + 1
        out.update({"schemaInvalid": invalid, "counts": counts})
    return out


truth = {}
for path in sorted(glob.glob(os.path.join(SAMPLES, "*.pcap*"))):
    name = os.path.basename(path)
    framing = FRAMING[name]
    streams = subprocess.run(["tshark", "-r", path, "-T", "fields", "-e", "tcp.stream"], capture_output=True, text=True, check=True).stdout.split()
    entries = []
    for stream in sorted(set(int(s) for s in streams if s)):
        nodes, records = follow(path, stream)
        for d, (src, dst) in ((0, (nodes[0], nodes[1])), (1, (nodes[1], nodes[0]))):
            data = b"".join(records[d])
            pdus, malformed, skipped, trailing = walk(framing, data)
            partial, merged, naive = stats(pdus, [len(r) for r in records[d]])
            entries.append({"stream": stream, "from": src, "to": dst, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(),
                            "segments": len(records[d]), "messages": len(pdus), "partialMessages": partial, "mergedSegments": merged,
                            "naiveReaderLoss": naive, "malformed": malformed, "undissectedBytes": skipped, "trailingIncompleteBytes": trailing})
            if framing["kind"] == "varint":
                entries[-1]["protobuf"] = protobuf_truth(framing, data, pdus)
    truth[name] = {"spec": framing["spec"], "directions": entries}
    if "schema" in framing:
        truth[name]["schema"] = framing["schema"]
with open(os.path.join(SAMPLES, "truth.json"), "w") as f:
    json.dump({"generated_by": subprocess.run(["tshark", "--version"], capture_output=True, text=True).stdout.splitlines()[0],
               "captures": truth}, f, indent=1, sort_keys=True)
    f.write("\n")
for name, t in truth.items():
    for e in t["directions"]:
        print(name, e["from"], "->", e["to"], {k: e[k] for k in ("bytes", "messages", "partialMessages", "mergedSegments", "naiveReaderLoss", "malformed", "undissectedBytes", "protobuf") if k in e})
