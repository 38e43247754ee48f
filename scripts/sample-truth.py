#!/usr/bin/env python3
"""Writes samples/truth.json: for every sample capture, per TCP stream and direction, the byte
count and sha256 of tshark's "follow TCP stream" output (the oracle the tests compare with).
Needs tshark. Usage: scripts/sample-truth.py"""
import binascii, glob, hashlib, json, os, subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLES = os.path.join(HERE, "..", "samples")


def follow(path, stream):
    out = subprocess.run(["tshark", "-r", path, "-q", "-d", "tcp.port==0-65535,data", "-z", "follow,tcp,raw,%d" % stream],
                         capture_output=True, text=True, check=True).stdout
    nodes, data = {}, {0: b"", 1: b""}
    body = False
    for line in out.splitlines():
        if line.startswith("Node 0:") or line.startswith("Node 1:"):
            nodes[int(line[5])] = line.split(": ", 1)[1].strip()
            body = True
            continue
        if not body or not line.strip() or line.startswith("="):
            continue
        direction = 1 if line.startswith("\t") else 0
        data[direction] += binascii.unhexlify(line.strip())
    return nodes, data


truth = {}
for path in sorted(glob.glob(os.path.join(SAMPLES, "*.pcap*"))):
    streams = subprocess.run(["tshark", "-r", path, "-T", "fields", "-e", "tcp.stream"], capture_output=True, text=True, check=True).stdout.split()
    entries = []
    for stream in sorted(set(int(s) for s in streams if s)):
        nodes, data = follow(path, stream)
        for d, (src, dst) in ((0, (nodes[0], nodes[1])), (1, (nodes[1], nodes[0]))):
            entries.append({"stream": stream, "from": src, "to": dst, "bytes": len(data[d]), "sha256": hashlib.sha256(data[d]).hexdigest()})
    truth[os.path.basename(path)] = entries
with open(os.path.join(SAMPLES, "truth.json"), "w") as f:
    json.dump({"generated_by": subprocess.run(["tshark", "--version"], capture_output=True, text=True).stdout.splitlines()[0], "captures": truth}, f, indent=1, sort_keys=True)
    f.write("\n")
print(json.dumps(truth, indent=1)[:1500])
