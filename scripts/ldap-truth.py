#!/usr/bin/env python3
"""The truth for the LDAP recordings (scripts/record-ldap.sh), from tshark, not from framescope.

For each TCP direction of the full capture it counts tshark's LDAP PDUs (ldap.protocolOp),
rebuilds the stream from tshark's segments and cuts it with a small BER reader of its own, which
must agree with tshark's count. The late capture's segments are placed in those streams by
sequence number (the full capture saw every SYN), which gives, per direction of each capture:
messages (whole PDUs), leadingBytes (the tail of a PDU that began before the capture), partial
(PDUs in two or more segments), merged (segments with bytes of two or more PDUs, a tail
included) and incomplete (PDUs the capture ends inside).

Usage: scripts/ldap-truth.py DIR   (reads DIR/ldap-full.pcap and DIR/ldap-late.pcap, writes
DIR/ldap.truth.json)"""
import collections, json, os, subprocess, sys

PORT = 3890


def tshark(path, *args):
    out = subprocess.run(["tshark", "-r", path, "-d", "tcp.port==%d,ldap" % PORT, *args],
                         check=True, capture_output=True, text=True).stdout
    return [line.split("\t") for line in out.splitlines()]


def direction_key(src, sport, dst, dport):
    """(client, server) endpoints and the direction's name."""
    if dport == PORT:
        return (src, sport, dst, dport), "clientToServer"
    return (dst, dport, src, sport), "serverToClient"


def segments(path):
    """Per (connection, direction): the SYN's raw sequence number (or None) and the data segments
    as (raw seq, payload bytes) in capture order."""
    rows = tshark(path, "-T", "fields", "-e", "ip.src", "-e", "tcp.srcport", "-e", "ip.dst", "-e", "tcp.dstport",
                  "-e", "tcp.seq_raw", "-e", "tcp.flags.syn", "-e", "tcp.payload")
    out = collections.defaultdict(lambda: {"syn": None, "segments": []})
    for src, sport, dst, dport, seq, syn, payload in rows:
        conn, name = direction_key(src, int(sport), dst, int(dport))
        d = out[(conn, name)]
        if syn in ("1", "True"):
            d["syn"] = int(seq)
        if payload:
            d["segments"].append((int(seq), bytes.fromhex(payload.replace(":", ""))))
    return out


def tshark_pdus(path):
    counts = collections.Counter()
    for src, sport, dst, dport, ops in tshark(path, "-Y", "ldap", "-T", "fields", "-e", "ip.src", "-e", "tcp.srcport",
                                              "-e", "ip.dst", "-e", "tcp.dstport", "-e", "ldap.protocolOp"):
        counts[direction_key(src, int(sport), dst, int(dport))] += len(ops.split(","))
    return counts


def ber_messages(stream):
    """(start, end) of each LDAPMessage: 0x30, a BER length, the contents."""
    out, at = [], 0
    while at < len(stream):
        assert stream[at] == 0x30, "not a SEQUENCE at %d" % at
        first = stream[at + 1]
        if first < 0x80:
            length, header = first, 2
        else:
            n = first & 0x7F
            length, header = int.from_bytes(stream[at + 2:at + 2 + n], "big"), 2 + n
        out.append((at, at + header + length))
        at += header + length
    return out


def figures(messages, spans, from_start):
    """The truth for the segments `spans` ((start, end) stream offsets, in order)."""
    first, last = spans[0][0], max(end for _, end in spans)
    starts = [m for m in messages if m[0] >= first]
    whole = [m for m in starts if m[1] <= last]
    leading = 0 if from_start else (starts[0][0] - first if starts else last - first)
    touches = []
    for s, e in spans:
        pieces = sum(1 for m in messages if m[0] < e and m[1] > s and m[0] >= first)
        if not from_start and s < (starts[0][0] if starts else last):
            pieces += 1  # the tail of a message that began before the capture
        touches.append(pieces)
    return {
        "messages": len(whole),
        "leadingBytes": leading,
        "partial": sum(1 for m in whole if sum(1 for s, e in spans if s < m[1] and e > m[0]) >= 2),
        "merged": sum(1 for t in touches if t >= 2),
        "incomplete": len(starts) - len(whole),
    }


def main():
    folder = sys.argv[1]
    full_path, late_path = (os.path.join(folder, n) for n in ("ldap-full.pcap", "ldap-late.pcap"))
    full, late, pdus = segments(full_path), segments(late_path), tshark_pdus(full_path)
    version = subprocess.run(["tshark", "--version"], capture_output=True, text=True).stdout.split()[2]
    truth = {"source": "tshark %s: ldap.protocolOp, tcp.seq_raw, tcp.payload" % version}
    for capture, dirs in (("full", full), ("late", late)):
        totals = {name: collections.Counter() for name in ("clientToServer", "serverToClient")}
        for key, d in dirs.items():
            isn = full[key]["syn"]
            assert isn is not None, "the full capture must hold every SYN"
            stream = bytearray()
            for seq, data in full[key]["segments"]:
                at = (seq - isn - 1) % (1 << 32)
                stream[at:at + len(data)] = data
            messages = ber_messages(bytes(stream))
            assert len(messages) == pdus[key], "%s: tshark counts %d PDUs, the BER reader %d" % (key, pdus[key], len(messages))
            spans, seen = [], set()
            for seq, data in d["segments"]:
                at = (seq - isn - 1) % (1 << 32)
                if at not in seen:  # a retransmission adds nothing
                    seen.add(at)
                    spans.append((at, at + len(data)))
            if spans:
                totals[key[1]].update(figures(messages, spans, from_start=d["syn"] is not None))
            totals[key[1]]["connections"] += 1
        truth[capture] = {name: dict(sorted(c.items())) for name, c in totals.items()}
    with open(os.path.join(folder, "ldap.truth.json"), "w") as f:
        json.dump(truth, f, indent=2, sort_keys=True)
        f.write("\n")
    print(json.dumps(truth, indent=2, sort_keys=True))


if __name__ == "__main__":
    main()
