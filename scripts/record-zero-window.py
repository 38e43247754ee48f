#!/usr/bin/env python3
"""Records a receiver that stops reading: a loopback client sends varint-framed messages to a
server with a small receive buffer that reads nothing for a while and then reads slowly, so the
server announces zero windows and the client probes them (tshark's tcp.analysis.zero_window and
zero_window_probe). Real Linux TCP, captured by tcpdump (root).

  scripts/record-zero-window.py OUT.pcap [PORT]
"""
import os, signal, socket, subprocess, sys, threading, time
from wire import varint

out, port = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 7403
tcpdump = subprocess.Popen(["tcpdump", "-i", "lo", "-s", "0", "-U", "-w", out, f"tcp port {port}"], stderr=subprocess.DEVNULL)
time.sleep(1)

listener = socket.socket()
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 2048)  # inherited by the accepted socket
listener.bind(("127.0.0.1", port))
listener.listen(1)


def serve():
    conn, _ = listener.accept()
    time.sleep(1.0)  # the application is busy: the window fills and closes
    received = 0
    while True:
        data = conn.recv(1024)
        if not data:
            break
        received += len(data)
        time.sleep(0.01)  # then it reads slowly
    conn.close()


server = threading.Thread(target=serve)
server.start()
client = socket.create_connection(("127.0.0.1", port))
client.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
body = bytes((i * 7) & 0xFF for i in range(600))
for i in range(40):
    message = bytes([0x0A]) + varint(len(body)) + body  # a protobuf field 1 of 600 bytes
    client.sendall(varint(len(message)) + message)
client.shutdown(socket.SHUT_WR)
server.join()
client.close()
time.sleep(1)
tcpdump.send_signal(signal.SIGINT)
tcpdump.wait()
