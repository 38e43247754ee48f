#!/usr/bin/env bash
# Records real OpenLDAP traffic (slapd and ldap-utils) in a private network namespace, twice at
# once: ldap-full.pcap from before any connection opens, and ldap-late.pcap from a tcpdump
# started a second later, in the middle of a long-lived ldapadd session and of a bulk search
# (the capture a user takes when the bug is already happening). scripts/ldap-truth.py derives
# the truth for both from the full capture with tshark.
#
# Needs root, slapd, ldap-utils, tcpdump, iproute2, ethtool and python3.
# Usage: sudo scripts/record-ldap.sh [OUT-DIR]   (default Tests/FramescopeCLITests/Fixtures/ldap)
# Traffic never leaves the namespace. The loopback has a 1500-byte MTU (segments of Ethernet
# size) and small socket buffers, and the search's output is read slowly, so that its answer
# is paced by TCP flow control (no loss, no retransmission) and takes seconds.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$(mkdir -p "${1:-$here/../Tests/FramescopeCLITests/Fixtures/ldap}" && cd "${1:-$here/../Tests/FramescopeCLITests/Fixtures/ldap}" && pwd)
ns=framescope-ldap
work=$(mktemp -d)
port=3890
run() { ip netns exec "$ns" "$@"; }
cleanup() {
    [ -f "$work/slapd.pid" ] && kill "$(cat "$work/slapd.pid")" 2>/dev/null || true
    ip netns del "$ns" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

ip netns del "$ns" 2>/dev/null || true
ip netns add "$ns"
ip -n "$ns" link set lo mtu 1500 up
run ethtool -K lo tso off gso off gro off >/dev/null
run sysctl -q -w net.ipv4.tcp_rmem="4096 8192 8192" net.ipv4.tcp_wmem="4096 8192 8192"

mkdir -p "$work/db"
cat >"$work/slapd.conf" <<EOF
include /etc/ldap/schema/core.schema
include /etc/ldap/schema/cosine.schema
include /etc/ldap/schema/inetorgperson.schema
modulepath /usr/lib/ldap
moduleload back_mdb
pidfile $work/slapd.pid
database mdb
suffix "dc=example,dc=org"
rootdn "cn=admin,dc=example,dc=org"
rootpw secret
directory $work/db
EOF
run slapd -f "$work/slapd.conf" -h "ldap://127.0.0.1:$port/"
for _ in $(seq 50); do [ -f "$work/slapd.pid" ] && break; sleep 0.1; done

# Entries with descriptions of MIN to MIN+SPAN bytes: many span segments, many share one.
entries() {  # FIRST COUNT MIN SPAN
    local i
    for i in $(seq "$1" $(($1 + $2 - 1))); do
        printf 'dn: cn=user%d,dc=example,dc=org\nobjectClass: inetOrgPerson\ncn: user%d\nsn: %d\n' "$i" "$i" "$i"
        printf 'description: d%s\n\n' "$(head -c $(($3 + (i * 733) % $4)) /dev/zero | tr '\0' x)"
    done
}
bind=(-x -H "ldap://127.0.0.1:$port/" -D "cn=admin,dc=example,dc=org" -w secret)
{ printf 'dn: dc=example,dc=org\nobjectClass: dcObject\nobjectClass: organization\no: example\ndc: example\n\n'; entries 1 30 100 1900; } \
    | run ldapadd "${bind[@]}" >/dev/null

ip netns exec "$ns" tcpdump -i lo --immediate-mode -U -s 0 -w "$out/ldap-full.pcap" "tcp port $port" 2>/dev/null &
full=$!
sleep 1
# A long-lived session: 20 entries of 1.5 to 4 KB, one every 0.1 s.
{ for i in $(seq 1001 1020); do entries "$i" 1 1500 2500; sleep 0.1; done; } | run ldapadd "${bind[@]}" >/dev/null &
adder=$!
sleep 0.3
# A reader of 16 KB/s behind a 4 KB pipe: ldapsearch, then slapd, wait for it.
python3 -c '
import fcntl, os, subprocess, sys, time
r, w = os.pipe()
fcntl.fcntl(w, 1031, 4096)  # F_SETPIPE_SZ
search = subprocess.Popen(sys.argv[1:], stdout=w)
os.close(w)
while os.read(r, 512): time.sleep(0.03)
sys.exit(search.wait())' ip netns exec "$ns" ldapsearch "${bind[@]}" -b dc=example,dc=org '(objectClass=*)' &
search=$!
sleep 0.6
ip netns exec "$ns" tcpdump -i lo --immediate-mode -U -s 0 -w "$out/ldap-late.pcap" "tcp port $port" 2>/dev/null &
late=$!
wait "$adder" "$search"
# A short search that the late capture holds whole.
run ldapsearch "${bind[@]}" -b dc=example,dc=org '(cn=user10*)' >/dev/null
sleep 1
kill "$late" "$full"
wait "$late" "$full" 2>/dev/null || true
ls -l "$out"/ldap-*.pcap
