#!/usr/bin/env python3
"""Records the captures that pin framescope's cause attribution (why messages are split and
glued): one real Linux TCP connection each, inside a private network namespace whose loopback
has a 1500-byte MTU, with one switch changed at a time: TCP_NODELAY on or off, a message in two
send()s or one, several messages per send(), messages above the MSS, a receiver with a small
window, segmentation offload (TSO/GSO/GRO) on or off. The client sends varint-delimited
messages; the server only reads. Each capture's switches go to causes.json beside them.

Needs root, tcpdump, iproute2 and ethtool.
  sudo scripts/record-causes.py [OUT-DIR]   (default Tests/FramescopeCLITests/Fixtures/causes)
Traffic never leaves the namespace."""
import json, os, socket, subprocess, sys, threading, time
from wire import varint

NETNS = "framescope-causes"
HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("--")
                      else os.path.join(HERE, "..", "Tests", "FramescopeCLITests", "Fixtures", "causes"))

# name: the switches (what the test reads) and how the client writes.
SCENARIOS = {
    # Header and body in two send()s with TCP_NODELAY (seed 003's client): every split is the
    # application's.
    "nodelay-two-writes": dict(nodelay=True, size=200, messages=40, per_write=1, split_writes=True, gap=0.005),
    # The same with Nagle on: the body waits for the header's ACK.
    "nagle-two-writes": dict(nodelay=False, size=200, messages=40, per_write=1, split_writes=True, gap=0.005),
    # Bursts of small messages, one send() each, to a receiver that delays its ACKs (quick ACKs
    # off after every read): Nagle holds them until the ACK and sends them together (seed 001);
    # with TCP_NODELAY each goes at once.
    "nagle-small-writes": dict(nodelay=False, size=60, messages=200, per_write=1, burst=10, gap=0.06, delayed_ack=True),
    "nodelay-small-writes": dict(nodelay=True, size=60, messages=200, per_write=1, burst=10, gap=0.06, delayed_ack=True),
    # Three messages in one send() (one writev), TCP_NODELAY: every merge is the application's.
    "one-write-three-messages": dict(nodelay=True, size=100, messages=60, per_write=3, gap=0.005),
    # Messages longer than the MSS, one send() each, spaced: every split is forced by the MSS.
    "above-mss": dict(nodelay=True, size=5000, messages=10, per_write=1, gap=0.005),
    # Below the MSS, same: nothing is split or glued.
    "below-mss": dict(nodelay=True, size=1000, messages=30, per_write=1, gap=0.005),
    # A receiver with a small buffer that reads slowly: segments end at its window's edge.
    "small-window": dict(nodelay=True, size=700, messages=60, per_write=1, gap=0, rcvbuf=4096, read_pause=0.005),
    # A bulk stream of large messages with offload on (super-segments at the capture point)
    # and off (wire-sized segments): the same writes.
    "offload-on": dict(nodelay=True, size=3000, messages=20, per_write=1, gap=0, offload=True),
    "offload-off": dict(nodelay=True, size=3000, messages=20, per_write=1, gap=0, offload=False),
}


def message(i, size):
    """A varint length and a `size`-byte body that is protobuf: field 1, bytes."""
    data = bytes((i * 31 + k) & 0xFF for k in range(size - 1 - len(varint(size))))
    body = b"\x0a" + varint(len(data)) + data
    return varint(len(body)), body


def run(port, s):
    """Inside the namespace: the server reads until the client closes."""
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if "rcvbuf" in s:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, s["rcvbuf"])  # inherited by the accepted socket
    listener.bind(("127.0.0.1", port))
    listener.listen(1)

    def serve():
        conn, _ = listener.accept()
        while True:
            if s.get("delayed_ack"):
                conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK, 0)  # Linux re-enables it on its own
            if not conn.recv(1024 if "read_pause" in s else 65536):
                break
            if "read_pause" in s:
                time.sleep(s["read_pause"])
        conn.close()

    server = threading.Thread(target=serve)
    server.start()
    client = socket.create_connection(("127.0.0.1", port))
    client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1 if s["nodelay"] else 0)
    i = 0
    while i < s["messages"]:
        for _ in range(s.get("burst", 1)):
            parts = [message(i + k, s["size"]) for k in range(s["per_write"])]
            if s.get("split_writes"):
                header, body = parts[0]
                client.sendall(header)
                client.sendall(body)
            else:
                client.sendmsg([b for p in parts for b in p])
            i += s["per_write"]
        if s["gap"]:
            time.sleep(s["gap"])
    client.shutdown(socket.SHUT_WR)
    server.join()
    client.close()


def record(name, port, s):
    path = os.path.join(OUT, name + ".pcap")
    features = "on" if s.get("offload") else "off"
    subprocess.check_call(["ip", "netns", "exec", NETNS, "ethtool", "-K", "lo", "tso", features, "gso", features, "gro", features],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    dump = subprocess.Popen(["ip", "netns", "exec", NETNS, "tcpdump", "-i", "lo", "-s", "0", "-U", "-w", path, "tcp port %d" % port],
                            stderr=subprocess.DEVNULL)
    time.sleep(1)
    subprocess.check_call(["ip", "netns", "exec", NETNS, sys.executable, __file__, "--run", name, str(port)])
    time.sleep(1)
    dump.terminate()
    dump.wait()
    print("wrote", path, os.path.getsize(path), "bytes")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--run":
        run(int(sys.argv[3]), SCENARIOS[sys.argv[2]])
        sys.exit(0)
    subprocess.call(["ip", "netns", "del", NETNS], stderr=subprocess.DEVNULL)
    subprocess.check_call(["ip", "netns", "add", NETNS])
    try:
        subprocess.check_call(["ip", "-n", NETNS, "link", "set", "lo", "mtu", "1500", "up"])
        os.makedirs(OUT, exist_ok=True)
        for n, (name, s) in enumerate(SCENARIOS.items()):
            record(name, 7300 + n, s)
        with open(os.path.join(OUT, "causes.json"), "w") as f:
            json.dump({name: {k: v for k, v in s.items()} for name, s in SCENARIOS.items()}, f, indent=1, sort_keys=True)
            f.write("\n")
    finally:
        subprocess.call(["ip", "netns", "del", NETNS])
