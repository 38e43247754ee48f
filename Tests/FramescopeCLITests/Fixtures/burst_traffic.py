#!/usr/bin/env python3
"""A burst of varint-delimited messages on loopback, both ways at once, with no pauses.
usage: burst_traffic.py PORT [MESSAGES] [MAX_BODY] [CONNECTIONS] [HOST]
Each of CONNECTIONS clients sends MESSAGES messages to a server on HOST:PORT (default
127.0.0.1) while the server sends as many back; bodies are 1..MAX_BODY random bytes (default
20,000), so loopback segments run up to 64 KB. Prints the messages sent each way as JSON.
Traffic goes only to HOST, which the caller chooses on loopback or in its own namespace."""
import json, random, socket, sys, threading

port = int(sys.argv[1])
messages = int(sys.argv[2]) if len(sys.argv) > 2 else 400
max_body = int(sys.argv[3]) if len(sys.argv) > 3 else 20_000
connections = int(sys.argv[4]) if len(sys.argv) > 4 else 1
host = sys.argv[5] if len(sys.argv) > 5 else "127.0.0.1"


def varint(n):
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def stream(seed):
    rng = random.Random(seed)
    out = bytearray()
    for _ in range(messages):
        body = rng.randbytes(rng.randint(1, max_body))
        out += varint(len(body)) + body
    return bytes(out)


def drain(sock, expected):
    got = 0
    while got < expected:
        chunk = sock.recv(1 << 20)
        if not chunk:
            break
        got += len(chunk)
    return got


def exchange(sock, seed, expected, errors):
    """Sends this side's whole stream while reading the peer's (each in its own thread)."""
    received = []
    reader = threading.Thread(target=lambda: received.append(drain(sock, expected)))
    reader.start()
    sock.sendall(stream(seed))
    sock.shutdown(socket.SHUT_WR)
    reader.join()
    if received[0] != expected:
        errors.append(f"received {received[0]} of {expected} bytes")
    sock.close()


listener = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.bind((host, port))
listener.listen(connections)
errors, threads = [], []


def serve():
    for i in range(connections):
        conn, _ = listener.accept()
        t = threading.Thread(target=exchange, args=(conn, 2 * i + 1, len(stream(2 * i)), errors))
        t.start()
        threads.append(t)


server = threading.Thread(target=serve)
server.start()
clients = []
for i in range(connections):
    c = socket.create_connection((host, port))
    t = threading.Thread(target=exchange, args=(c, 2 * i, len(stream(2 * i + 1)), errors))
    t.start()
    clients.append(t)
for t in clients:
    t.join()
server.join()
for t in threads:
    t.join()
listener.close()
if errors:
    sys.exit("; ".join(errors))
print(json.dumps({"connections": connections, "messagesEachWay": messages}))
