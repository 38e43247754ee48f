#!/usr/bin/env python3
"""Framed messages on many connections for a fixed time, for the watch soak test.
usage: soak_traffic.py server BIND_HOST PORT CONNECTIONS
       soak_traffic.py client HOST PORT CONNECTIONS SECONDS [MBIT_PER_S]
The client opens CONNECTIONS connections and sends varint-delimited messages (random bodies of
20..1400 bytes) on each until SECONDS pass, at most MBIT_PER_S in all (0 or absent: as fast as it
can), in whole chunks of known message counts; it prints the messages and bytes sent as JSON.
The server reads and discards, and prints the bytes it received. Bounded in time and count; the
caller chooses addresses on loopback or in namespaces it made."""
import json, random, socket, sys, threading, time


def varint(n):
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def chunk(seed, size=32_768):
    """Whole messages, about `size` bytes in all: (bytes, message count)."""
    rng, out, count = random.Random(seed), bytearray(), 0
    while len(out) < size:
        body = rng.randbytes(rng.randint(20, 1400))
        out += varint(len(body)) + body
        count += 1
    return bytes(out), count


def server(host, port, connections):
    listener = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((host, port))
    listener.listen(connections)
    print("listening", flush=True)
    received, threads = [0] * connections, []

    def drain(i, conn):
        while data := conn.recv(1 << 20):
            received[i] += len(data)
        conn.close()

    for i in range(connections):
        conn, _ = listener.accept()
        t = threading.Thread(target=drain, args=(i, conn))
        t.start()
        threads.append(t)
    for t in threads:
        t.join()
    print(json.dumps({"bytesReceived": sum(received)}))


def client(host, port, connections, seconds, mbit):
    deadline = time.monotonic() + seconds
    per_connection = mbit * 1e6 / 8 / connections if mbit > 0 else 0
    sent = [(0, 0)] * connections

    def send(i):
        data, count = chunk(i)
        sock = socket.create_connection((host, port))
        start, chunks = time.monotonic(), 0
        while (now := time.monotonic()) < deadline:
            if per_connection and chunks * len(data) > (now - start) * per_connection:
                time.sleep(min(0.01, deadline - now))
                continue
            sock.sendall(data)
            chunks += 1
        sock.shutdown(socket.SHUT_WR)
        sock.recv(1)  # the server closes after reading everything
        sock.close()
        sent[i] = (chunks * count, chunks * len(data))

    threads = [threading.Thread(target=send, args=(i,)) for i in range(connections)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(json.dumps({"messages": sum(m for m, _ in sent), "bytes": sum(b for _, b in sent), "seconds": seconds}))


if sys.argv[1] == "server":
    server(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
else:
    mbit = float(sys.argv[6]) if len(sys.argv) > 6 else 0
    client(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]), mbit)
