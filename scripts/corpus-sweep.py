#!/usr/bin/env python3
"""The corpus captures made into the captures people bring, and every message framescope reports
held to the corpus framing walk (tshark's truth in ../shared/corpus/truth).

Each capture of ../shared/corpus is analyzed with the SPEC DissectorConformanceTests gives it,
after one of these:
  late     the first 10, 30, 50 and 70% of its frames cut off (editcap -r): directions picked up
           mid-stream, whose first boundary recovery must find;
  snaplen  every frame cut to 64, 128, 256 and 600 bytes (editcap -s): gaps in every segment;
  junk     each direction (SYN seen, at least 6 PDUs) written into a capture of its own, in its own
           segments, with 1, 7, 33 or 200 random bytes inserted at a PDU boundary (as a write of
           their own or glued to the next PDU), four times per direction.

A message is right when its offset and length are a PDU of the walk (offsets mapped back to the
original stream: the bytes cut off in front, the junk inserted); the table gives per mode the
directions checked, the PDUs there, the right messages and the wrong ones, then each direction
with a wrong message. Delimiter SPECs are left out of `junk` (junk in front of a line is part of
that line: no framing can tell). Where the walk itself is doubtful (tls-overlap-zero-window,
smtp: corpus README) a wrong message there is the walk's; read the lines.

Usage: scripts/corpus-sweep.py [late|snaplen|junk ...] [--only NAME,...] [--framescope PATH]
Needs tshark, editcap and capinfos (apt: tshark), the corpus beside the checkout, and a release
build (swift build -c release). Scratch files go to a temporary folder."""
import argparse, collections, json, os, random, re, struct, subprocess, sys, tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
CORPUS = os.path.join(ROOT, "..", "shared", "corpus")


def corpus_specs():
    """Capture name → SPEC, as the conformance tests frame them."""
    source = open(os.path.join(ROOT, "Tests/FramescopeCaptureTests/DissectorConformanceTests.swift")).read()
    return {k: v.replace("\\\\", "\\") for k, v in re.findall(r'"([a-z0-9-]+)": "((?:preset|length|delimiter)[^"]*)"', source)}


def walk_pdus(direction):
    """The walk's PDUs of a direction as a set of (offset, length), and where it stopped (or None)."""
    walk = direction["walk"]
    preamble = walk.get("preamble") or []
    offset = sum(p["length"] for p in preamble) if isinstance(preamble, list) else 0
    pdus = set()
    for length in walk["pdu_lengths"]:
        pdus.add((offset, length))
        offset += length
    return pdus, (walk["stopped"]["offset"] if walk.get("stopped") else None)


def walked_directions(truth, need_syn=False):
    """(src, dst) → (PDUs, stop) for the directions with a walk and no gaps."""
    result = {}
    for stream in truth["streams"]:
        if need_syn and not (stream.get("syn_seen") and stream.get("synack_seen")):
            continue
        for d in stream["directions"].values():
            if d.get("walk") and not d.get("gaps"):
                result[(d["src"], d["dst"])] = walk_pdus(d)
    return result


def endpoint(address, port):
    return f"[{address}]:{port}" if ":" in address else f"{address}:{port}"


def frames_of(capture):
    """(frame, src, dst, relative seq, payload length) of every TCP frame, by tshark."""
    out = subprocess.run(["tshark", "-n", "-r", capture, "-o", "tcp.relative_sequence_numbers:TRUE", "-Y", "tcp", "-T", "fields",
                          "-E", "separator=|", "-e", "frame.number", "-e", "ip.src", "-e", "ipv6.src", "-e", "tcp.srcport",
                          "-e", "ip.dst", "-e", "ipv6.dst", "-e", "tcp.dstport", "-e", "tcp.seq", "-e", "tcp.len"],
                         capture_output=True, text=True).stdout
    frames = []
    for line in out.splitlines():
        f = line.split("|")
        if f[7]:
            src, dst = (f[1] or f[2]).split(",")[0], (f[4] or f[5]).split(",")[0]
            frames.append((int(f[0]), endpoint(src, f[3]), endpoint(dst, f[6]), int(f[7]), int(f[8] or 0)))
    return frames


def frame_count(capture):
    return int(subprocess.run(["capinfos", "-c", "-M", "-T", capture], capture_output=True, text=True).stdout.split()[-1])


def editcap(options, source, target, after=()):
    """editcap into a pcap, or into pcapng when the capture's link types need it."""
    if subprocess.run(["editcap", "-F", "pcap", *options, source, target, *after], capture_output=True).returncode != 0:
        subprocess.run(["editcap", *options, source, target, *after], check=True, capture_output=True)


class Sweep:
    def __init__(self, framescope, scratch):
        self.framescope, self.scratch = framescope, scratch
        self.totals = collections.defaultdict(collections.Counter)
        self.lines = []

    def messages(self, capture, spec):
        """framescope's messages per (from, to): (offset, length) in its sequence space."""
        report, listing = os.path.join(self.scratch, "r.json"), os.path.join(self.scratch, "m.ndjson")
        run = subprocess.run([self.framescope, "analyze", capture, "--dissector", spec, "--format", "json", "--messages", listing,
                              "-o", report], capture_output=True, text=True)
        if run.returncode != 0:
            return None, run.stderr.strip().splitlines()[-1:]
        connections = {c["id"]: c for c in json.load(open(report))["connections"]}
        by_direction = collections.defaultdict(list)
        for line in open(listing):
            m = json.loads(line)
            c = connections[m["connection"]]
            key = (c["client"], c["server"]) if m["direction"] == "client-to-server" else (c["server"], c["client"])
            by_direction[key].append((m["offset"], m["length"]))
        return by_direction, None

    def judge(self, mode, place, pdus, stop, ours, expected):
        wrong = [m for m in ours if m not in pdus and (stop is None or m[0] < stop)]
        t = self.totals[mode]
        t["directions"] += 1
        t["PDUs"] += expected
        t["right"] += len(ours) - len(wrong)
        t["wrong"] += len(wrong)
        if wrong:
            self.lines.append(f"{mode:8s} {place}: {len(wrong)} of {len(ours)} messages are no PDU, e.g. {wrong[:3]}")

    def crashed(self, mode, place, error):
        self.totals[mode]["failed runs"] += 1
        self.lines.append(f"{mode:8s} {place}: framescope failed: {error}")

    def late(self, name, spec, truth, capture):
        directions, frames, total = walked_directions(truth), frames_of(capture), frame_count(capture)
        for fraction in (0.1, 0.3, 0.5, 0.7):
            first = max(2, int(total * fraction))
            cut = os.path.join(self.scratch, "late.pcap")
            editcap(["-r"], capture, cut, [f"{first}-{total}"])
            ours, error = self.messages(cut, spec)
            if ours is None:
                self.crashed("late", f"{name} from frame {first}", error)
                continue
            for key, (pdus, stop) in directions.items():
                sent = [(number, seq) for number, src, dst, seq, length in frames if (src, dst) == key and length > 0]
                kept = [seq for number, seq in sent if number >= first]
                if not kept:
                    continue
                # The walk counts from the direction's first byte in the capture, framescope from the
                # first byte it sees (tshark's relative numbers start at 1 only after a SYN).
                base = kept[0] - sent[0][1]
                mapped = [(offset + base, length) for offset, length in ours.get(key, [])]
                self.judge("late", f"{name} from frame {first} {key[0]}>{key[1]}", pdus, stop, mapped,
                           sum(1 for p in pdus if p[0] >= base))

    def snaplen(self, name, spec, truth, capture):
        directions = walked_directions(truth, need_syn=True)
        for snap in (64, 128, 256, 600):
            cut = os.path.join(self.scratch, "snaplen.pcap")
            editcap(["-s", str(snap)], capture, cut)
            ours, error = self.messages(cut, spec)
            if ours is None:
                self.crashed("snaplen", f"{name} snaplen {snap}", error)
                continue
            for key, (pdus, stop) in directions.items():
                self.judge("snaplen", f"{name} snaplen {snap} {key[0]}>{key[1]}", pdus, stop, ours.get(key, []), len(pdus))

    def junk(self, name, spec, truth, capture, rng):
        if spec.startswith("delimiter"):
            return
        streams = os.path.join(self.scratch, "streams")
        subprocess.run(["rm", "-rf", streams])
        subprocess.run([self.framescope, "extract", capture, "--out", streams], capture_output=True)
        files = os.listdir(streams) if os.path.isdir(streams) else []
        for stream in truth["streams"]:
            if not stream.get("syn_seen"):
                continue
            for d in stream["directions"].values():
                walk = d.get("walk")
                if not walk or walk.get("stopped") or d.get("gaps") or len(walk["pdu_lengths"]) < 6:
                    continue
                suffix = f"-{d['src'].replace(':', '.')}-{d['dst'].replace(':', '.')}.bin"
                found = [f for f in files if f.endswith(suffix)]
                data = open(os.path.join(streams, found[0]), "rb").read() if len(found) == 1 else b""
                if len(data) != d["reassembled_bytes"]:
                    continue
                pdus, _ = walk_pdus(d)
                starts = sorted(p[0] for p in pdus)
                for trial in range(4):
                    size, own = rng.choice([1, 7, 33, 200]), trial % 2 == 0
                    at = starts[rng.randrange(len(starts) // 3, len(starts) - 2)]
                    junk = bytes(rng.randrange(256) for _ in range(size))
                    segments, position = [], 0
                    for length in d["follow_segment_lengths"]:
                        segment = data[position:position + length]
                        if position <= at < position + length:
                            cut = at - position
                            parts = (segment[:cut], junk, segment[cut:]) if own else (segment[:cut], junk + segment[cut:])
                            segments += [p for p in parts if p]
                        else:
                            segments.append(segment)
                        position += length
                    path = os.path.join(self.scratch, "junk.pcap")
                    write_one_direction(path, segments)
                    ours, error = self.messages(path, spec)
                    place = f"{name} {d['src']}>{d['dst']} {size} B {'written alone' if own else 'glued'} at {at}"
                    if ours is None:
                        self.crashed("junk", place, error)
                        continue
                    mapped = [(o if o < at else o - size, length) for o, length in ours.get(("10.0.0.1:40000", "10.0.0.2:9999"), [])]
                    self.judge("junk", place, pdus, None, mapped, len(pdus))


def write_one_direction(path, payloads):
    """A pcap of one connection from 10.0.0.1:40000 to 10.0.0.2:9999: SYN, ACK, `payloads` in
    segments of their own, FIN (a handshake framescope reads as a whole connection)."""
    def checksum(header):
        total = sum(struct.unpack("!10H", header))
        total = (total >> 16) + (total & 0xFFFF)
        return ~(total + (total >> 16)) & 0xFFFF

    def packet(seq, flags, payload):
        tcp = struct.pack("!HHIIBBHHH", 40000, 9999, seq & 0xFFFFFFFF, 1, 5 << 4, flags, 65535, 0, 0) + payload
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), 1, 0, 64, 6, 0, bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2]))
        ip = ip[:10] + struct.pack("!H", checksum(ip)) + ip[12:]
        return bytes(6) + b"\x02" + bytes(5) + b"\x08\x00" + ip + tcp

    frames, seq = [packet(1000, 0x02, b""), packet(1001, 0x10, b"")], 1001
    for payload in payloads:
        frames.append(packet(seq, 0x18, payload))
        seq += len(payload)
    frames.append(packet(seq, 0x11, b""))
    with open(path, "wb") as out:
        out.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 262144, 1))
        for i, frame in enumerate(frames):
            out.write(struct.pack("<IIII", 1700000000 + i // 1000, (i % 1000) * 1000, len(frame), len(frame)) + frame)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("modes", nargs="*", help="late, snaplen, junk (default: all three)")
    parser.add_argument("--only", help="capture names, comma-separated")
    parser.add_argument("--framescope", default=os.path.join(ROOT, ".build/release/framescope"))
    args = parser.parse_args()
    args.modes = args.modes or ["late", "snaplen", "junk"]
    if unknown := set(args.modes) - {"late", "snaplen", "junk"}:
        parser.error(f"unknown mode {', '.join(sorted(unknown))}: late, snaplen or junk")
    if not os.path.isdir(CORPUS):
        sys.exit(f"{CORPUS}: the corpus is not beside the checkout")
    rng = random.Random(1)
    with tempfile.TemporaryDirectory(prefix="framescope-sweep-") as scratch:
        sweep = Sweep(args.framescope, scratch)
        for name, spec in sorted(corpus_specs().items()):
            if args.only and name not in args.only.split(","):
                continue
            truth = json.load(open(os.path.join(CORPUS, "truth", name + ".json")))
            capture = os.path.join(CORPUS, truth["file"])
            for mode in args.modes:
                if mode == "junk":
                    sweep.junk(name, spec, truth, capture, rng)
                else:
                    getattr(sweep, mode)(name, spec, truth, capture)
    print(f"{'mode':8s} {'directions':>10s} {'PDUs':>8s} {'right':>8s} {'wrong':>6s} {'failed runs':>11s}")
    for mode in args.modes:
        t = sweep.totals[mode]
        print(f"{mode:8s} {t['directions']:10d} {t['PDUs']:8d} {t['right']:8d} {t['wrong']:6d} {t['failed runs']:11d}")
    for line in sweep.lines:
        print(line)


if __name__ == "__main__":
    main()
