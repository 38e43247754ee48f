#!/usr/bin/env python3
"""Records the bundled sample captures: real TCP traffic between a small client and server,
inside a private network namespace whose loopback has a 1500-byte MTU (so segments have
Ethernet-like sizes and messages are split and coalesced as on a real network).

Needs root, tcpdump and iproute2. Usage: sudo scripts/record-samples.py [samples-dir]
Traffic never leaves the namespace."""
import os, random, socket, struct, subprocess, sys, threading, time

NETNS = "framescope-samples"
HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "samples"))


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


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


def varint_im(port, family=socket.AF_INET, host="127.0.0.1"):
    """The server pushes 200 varint-delimited messages in bursts (Nagle glues them),
    some written in two halves (the receiver sees partial messages); the client sends 20."""
    rng = random.Random(7)
    def server(conn):
        for i in range(200):
            m = varint(len(m0 := chat_message(rng, i))) + m0
            if i % 17 == 5:
                conn.sendall(m[: len(m) // 2]); time.sleep(0.002); conn.sendall(m[len(m) // 2 :])
            else:
                conn.sendall(m)
            if i % 25 == 24:
                time.sleep(0.01)
        drain(conn)
    t = serve(port, server, family, host)
    time.sleep(0.2)
    c = socket.create_connection((host, port))
    reader = threading.Thread(target=drain, args=(c,))
    reader.start()
    for i in range(20):
        m = chat_message(rng, 1000 + i)
        c.sendall(varint(len(m)) + m)
        time.sleep(0.003)
    time.sleep(0.3)
    c.shutdown(socket.SHUT_WR)
    t.join()
    reader.join()
    c.close()


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


def record(name, port, run, extra_filter=""):
    path = os.path.join(OUT, name)
    dump = subprocess.Popen(
        ["ip", "netns", "exec", NETNS, "tcpdump", "-i", "lo", "-w", path, "-U", "-s", "0",
         "tcp port %d%s" % (port, extra_filter)], stderr=subprocess.DEVNULL)
    time.sleep(1)
    subprocess.check_call(["ip", "netns", "exec", NETNS, sys.executable, __file__, "--run", run, str(port)])
    time.sleep(0.5)
    dump.terminate()
    dump.wait()
    print("wrote", path, os.path.getsize(path), "bytes")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--run":
        port = int(sys.argv[3])
        {"varint": lambda: varint_im(port), "varint6": lambda: varint_im(port, socket.AF_INET6, "::1"),
         "lines": lambda: lines(port)}[sys.argv[2]]()
        sys.exit(0)
    subprocess.call(["ip", "netns", "del", NETNS], stderr=subprocess.DEVNULL)
    subprocess.check_call(["ip", "netns", "add", NETNS])
    try:
        subprocess.check_call(["ip", "-n", NETNS, "link", "set", "lo", "mtu", "1500", "up"])
        os.makedirs(OUT, exist_ok=True)
        record("im-varint.pcap", 7001, "varint")
        record("im-varint-ipv6.pcap", 7002, "varint6")
        record("lines-crlf.pcap", 7003, "lines")
    finally:
        subprocess.call(["ip", "netns", "del", NETNS])
