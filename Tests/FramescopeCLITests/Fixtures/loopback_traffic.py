#!/usr/bin/env python3
"""Loopback traffic with known message counts, for the watch tests.
usage: loopback_traffic.py VARINT_PORT LENGTH_PORT CLIENT_MESSAGES SERVER_MESSAGES
On VARINT_PORT messages are varint-delimited; on LENGTH_PORT they carry a 4-byte big-endian
length prefix (length:offset=0,width=4). Each client sends CLIENT_MESSAGES, each server answers
with SERVER_MESSAGES, in bursts so that some are glued and some split. 127.0.0.1 only."""
import socket, struct, sys, threading, time

varint_port, length_port, n_client, n_server = (int(a) for a in sys.argv[1:5])


def varint(n):
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


FRAME = {varint_port: lambda body: varint(len(body)) + body, length_port: lambda body: struct.pack(">I", len(body)) + body}


def body(i):
    return b"x" * (20 + (i * 37) % 3000)


def drain(sock):
    while sock.recv(65536):
        pass


def serve(listener, frame):
    conn, _ = listener.accept()
    for i in range(n_server):
        conn.sendall(frame(body(i)))
        if i % 10 == 9:
            time.sleep(0.005)
    conn.shutdown(socket.SHUT_WR)
    drain(conn)
    conn.close()


threads, listeners = [], []
for port in (varint_port, length_port):
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(1)
    listeners.append(listener)
    t = threading.Thread(target=serve, args=(listener, FRAME[port]))
    t.start()
    threads.append(t)
for port in (varint_port, length_port):
    c = socket.create_connection(("127.0.0.1", port))
    reader = threading.Thread(target=drain, args=(c,))
    reader.start()
    for i in range(n_client):
        c.sendall(FRAME[port](body(1000 + i)))
        if i % 7 == 6:
            time.sleep(0.003)
    c.shutdown(socket.SHUT_WR)
    reader.join()
    c.close()
for t in threads:
    t.join()
for listener in listeners:
    listener.close()
