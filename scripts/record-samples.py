#!/usr/bin/env python3
"""Records the bundled sample captures: real TCP traffic between a small client and server,
inside a private network namespace whose loopback has a 1500-byte MTU (so segments have
Ethernet-like sizes and messages are split and coalesced as on a real network).

Needs root, tcpdump, iproute2 and ethtool. Usage: sudo scripts/record-samples.py [samples-dir [NAME.pcap...]]
(with names, only those are recorded again)
Traffic never leaves the namespace."""
import os, random, socket, struct, subprocess, sys, threading, time
from wire import varint

NETNS = "framescope-samples"
HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "samples"))


def chat_message(rng, i):
    """A protobuf-shaped chat message: field 1 varint id, field 2 string text."""
    text = ("msg %d " % i + "x" * rng.choice([10, 20, 40, 80, 150, 300, 1200, 3000])).encode()
    return b"\x08" + varint(i) + b"\x12" + varint(len(text)) + text


def serve(port, handler, family=socket.AF_INET, host="127.0.0.1"):
    s = socket.socket(family, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((host, port))
    s.listen(1)
    def run():
        conn, _ = s.accept()
        handler(conn)
        conn.close()
        s.close()
    t = threading.Thread(target=run)
    t.start()
    return t


def exchange(port, server_messages, client_messages, half_every, half_at, pause_every, client_gap,
             cut=lambda m: len(m) // 2, family=socket.AF_INET, host="127.0.0.1"):
    """The server pushes its messages in bursts (Nagle glues them), writing every `half_every`-th
    (from `half_at`) in two parts, the first `cut(m)` bytes long (the receiver sees partial
    messages), and pausing every `pause_every`; the client sends its own `client_gap` seconds apart."""
    def server(conn):
        for i, m in enumerate(server_messages):
            if i % half_every == half_at:
                first = cut(m)
                conn.sendall(m[:first]); time.sleep(0.002); conn.sendall(m[first:])
            else:
                conn.sendall(m)
            if i % pause_every == pause_every - 1:
                time.sleep(0.01)
        drain(conn)
    t = serve(port, server, family, host)
    time.sleep(0.2)
    c = socket.create_connection((host, port))
    reader = threading.Thread(target=drain, args=(c,))
    reader.start()
    for m in client_messages:
        c.sendall(m)
        time.sleep(client_gap)
    time.sleep(0.3)
    c.shutdown(socket.SHUT_WR)
    t.join()
    reader.join()
    c.close()


def delimited(body):
    return varint(len(body)) + body


def varint_im(port, family=socket.AF_INET, host="127.0.0.1"):
    """The server pushes 200 varint-delimited messages, the client sends 20."""
    rng = random.Random(7)
    server = [delimited(chat_message(rng, i)) for i in range(200)]
    client = [delimited(chat_message(rng, 1000 + i)) for i in range(20)]
    exchange(port, server, client, half_every=17, half_at=5, pause_every=25, client_gap=0.003, family=family, host=host)


def envelope(cmd, seq, text=None, attachment=None, sent_at=None):
    """An Envelope of samples/proto/chat.proto, encoded by hand (cmd 0 is left out, as proto3 does)."""
    out = b""
    if cmd:
        out += b"\x08" + varint(cmd)
    out += b"\x10" + varint(seq)
    if text is not None:
        out += b"\x1a" + varint(len(text)) + text
    if attachment is not None:
        name, data = attachment
        inner = b"\x0a" + varint(len(name)) + name + b"\x12" + varint(len(data)) + data
        out += b"\x22" + varint(len(inner)) + inner
    if sent_at is not None:
        out += b"\x29" + struct.pack("<Q", sent_at)
    return out


def protobuf_im(port):
    """Envelopes (samples/proto/chat.proto), varint-delimited both ways, in bursts (Nagle glues
    them), some written in two halves. The server's messages include sender bugs: 3 texts that are
    not UTF-8 and an attachment name that is not (wire data fine, not a valid Envelope), and 2 JSON
    bodies written into the protobuf channel (not protobuf wire data at all)."""
    rng = random.Random(11)
    LOGIN, SEND, ACK, TYPING, LOGOUT = 1, 2, 3, 4, 5
    def server_body(i):
        if i in (50, 140):
            return b'{"cmd":"SEND","seq":%d,"text":"sent as JSON by the web gateway"}' % i
        cmd = [ACK, ACK, SEND, TYPING, SEND][i % 5]
        text = None
        if cmd == SEND:
            text = ("message %d " % i).encode() + b"y" * rng.choice([10, 40, 120, 400, 1400, 3000])
            if i in (32, 77, 122):
                text = text[:20] + b"\xff\xfe" + text[22:]
        attachment = None
        if i % 10 == 9:
            name = b"photo-%d.jpg" % i if i != 99 else b"photo-\xc3\x28.jpg"
            attachment = (name, bytes(rng.randrange(256) for _ in range(rng.choice([100, 900, 2500]))))
        return envelope(cmd, i, text, attachment, sent_at=1_700_000_000_000 + i)
    server = [delimited(server_body(i)) for i in range(160)]
    client = [envelope(LOGIN, 0, b"alice")]
    client += [envelope(SEND, i, ("hello %d " % i).encode() + b"z" * rng.choice([5, 50, 500])) for i in range(1, 25)]
    client += [envelope(0, 25, b"no command set"), envelope(LOGOUT, 26)]
    exchange(port, server, [delimited(m) for m in client], half_every=19, half_at=7, pause_every=20, client_gap=0.003)


def drain(sock):
    while sock.recv(65536):
        pass


def lines(port):
    """A line protocol: commands and multi-line answers, CRLF-terminated."""
    def server(conn):
        buf = b""
        while True:
            data = conn.recv(4096)
            if not data:
                break
            buf += data
            while b"\r\n" in buf:
                line, buf = buf.split(b"\r\n", 1)
                for k in range(3):
                    conn.sendall(b"+OK " + line + b" part %d\r\n" % k)
    t = serve(port, server)
    time.sleep(0.2)
    c = socket.create_connection(("127.0.0.1", port))
    reader = threading.Thread(target=drain, args=(c,))
    reader.start()
    for i in range(30):
        c.sendall(b"GET key:%d\r\n" % i)
        if i % 3 == 0:
            time.sleep(0.005)
    time.sleep(0.2)
    c.shutdown(socket.SHUT_WR)
    t.join()
    reader.join()
    c.close()


def seed_exchange(port, encode, server_count, client_count, corrupt=()):
    """Both sides send messages of a seed protocol; message numbers in `corrupt` are written in
    host byte order, the bug of seed 002."""
    rng = random.Random(port)
    def body(i):
        return ('{"seq":%d,"text":"%s"}' % (i, "m" * rng.choice([5, 20, 60, 150, 400, 1400, 2500]))).encode()
    server = [encode(i, body(i), i in corrupt) for i in range(server_count)]
    client = [encode(1000 + i, body(1000 + i), False) for i in range(client_count)]
    exchange(port, server, client, half_every=13, half_at=6, pause_every=20, client_gap=0.004, cut=lambda m: 7)


def seed_0xff(i, body, host_order):
    """Seed 002: 0xff (4) + size = len(data) + 4 (4) + commandId (4) + data, big-endian."""
    order = "<" if host_order else ">"
    return struct.pack(order + "III", 0xFF, len(body) + 4, 100 + i % 7) + body


def seed_7byte(i, body, _):
    """Seed 003: version (2) + function (2) + zip (1) + body length (2) + body."""
    return struct.pack(">HHBH", 1, 10 + i % 4, 0, len(body)) + body


def seed_ascii10(i, body, _):
    """Seed 000: a 10-byte header whose bytes 6..9 are the body length in ASCII digits."""
    return b"IM" + struct.pack(">I", i) + b"%04d" % len(body) + body


def seed_v01(i, body, _):
    """Seed 004: "V0.1" + total length (8 ASCII digits, header included) + type (8 digits) + 17 zeros."""
    return b"V0.1" + b"%08d" % (len(body) + 37) + b"%08d" % (1 + i % 3) + b"0" * 17 + body


def seed_8byte(i, body, _):
    """Seed 001: service number (4) + body length (4, big-endian) + body."""
    return struct.pack(">II", 7, len(body)) + body


SEEDS = {
    "seed-0xff-command": (seed_0xff, 120, 15, (40, 41, 90)),
    "seed-7byte-header": (seed_7byte, 120, 15, ()),
    "seed-ascii10-header": (seed_ascii10, 120, 15, ()),
    "seed-v01-header": (seed_v01, 120, 15, ()),
    "seed-8byte-header": (seed_8byte, 120, 15, ()),
}


def record(name, port, run, extra_filter=""):
    if sys.argv[2:] and name not in sys.argv[2:]:
        return
    path = os.path.join(OUT, name)
    dump = subprocess.Popen(
        ["ip", "netns", "exec", NETNS, "tcpdump", "-i", "lo", "--immediate-mode", "-w", path, "-U", "-s", "0",
         "tcp port %d%s" % (port, extra_filter)], stderr=subprocess.DEVNULL)
    time.sleep(1)
    subprocess.check_call(["ip", "netns", "exec", NETNS, sys.executable, __file__, "--run", run, str(port)])
    time.sleep(1.5)
    dump.terminate()
    dump.wait()
    if os.path.getsize(path) <= 24:
        sys.exit("%s: tcpdump captured nothing" % path)
    print("wrote", path, os.path.getsize(path), "bytes")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--run":
        port = int(sys.argv[3])
        runs = {"varint": lambda: varint_im(port), "varint6": lambda: varint_im(port, socket.AF_INET6, "::1"),
                "lines": lambda: lines(port), "protobuf": lambda: protobuf_im(port)}
        for seed, (encode, n_server, n_client, corrupt) in SEEDS.items():
            runs[seed] = lambda e=encode, a=n_server, b=n_client, c=corrupt: seed_exchange(port, e, a, b, c)
        runs[sys.argv[2]]()
        sys.exit(0)
    subprocess.call(["ip", "netns", "del", NETNS], stderr=subprocess.DEVNULL)
    subprocess.check_call(["ip", "netns", "add", NETNS])
    try:
        subprocess.check_call(["ip", "-n", NETNS, "link", "set", "lo", "mtu", "1500", "up"])
        # No segmentation offload: the capture shows wire-sized segments.
        subprocess.check_call(["ip", "netns", "exec", NETNS, "ethtool", "-K", "lo", "tso", "off", "gso", "off", "gro", "off"])
        os.makedirs(OUT, exist_ok=True)
        record("im-varint.pcap", 7001, "varint")
        record("im-varint-ipv6.pcap", 7002, "varint6")
        record("lines-crlf.pcap", 7003, "lines")
        record("im-protobuf.pcap", 7004, "protobuf")
        for n, seed in enumerate(SEEDS):
            record(seed + ".pcap", 7010 + n, seed)
    finally:
        subprocess.call(["ip", "netns", "del", NETNS])
