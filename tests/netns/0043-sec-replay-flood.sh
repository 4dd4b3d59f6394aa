#!/bin/sh
# Attack on the replay table: a key holder floods the server with valid
# knocks (distinct TSvals) from forged sources to fill limits.replay = 64,
# first from one source, then from 200 source prefixes (IPv6 /64s).  Another
# key holder's client, and another source with the flooder's own key, must
# still get in (a full table refuses nothing), the knocks they made before
# must still be remembered (their replay from another address refused: the
# flood displaced only the flooder's source, then only the flooder's key),
# and the displacements are counted.  Then clients without TCP timestamps:
# in knock mode every such client sends the same ISN, so a second source
# gets in too (no replay check, counted), and a protect entry with
# timestamps = "required" refuses a valid knock without one.
#
#   client ns $NS_C                            server ns $NS_S
#   vc 192.0.2.1, 192.0.2.3 /24       veth     vs 192.0.2.2/24, 2001:db8::2/64
#      2001:db8::1, 2001:db8::3 /64 ----------  knockgw: 22 native, keys k and l,
#   prober.py, synburst.py (forged               limits.replay 64; 2222 knock mode;
#   sources 192.0.2.77 and                       then 2223 with timestamps "required"
#   2001:db8:0:N::1, N = 1..200)                sshd :22 and :2222
. "$(dirname "$0")/lib/lib.sh"

make_topology
in_c ip addr add 192.0.2.3/24 dev vc
in_c ip addr add 2001:db8::3/64 dev vc nodad
quiet_client_rsts
start_sshd
start_sshd2
K=$(key_file k)
L=$(key_file l)
C4B=192.0.2.3 C6B=2001:db8::3
# Port 22's epoch window: long enough that a knock made before a flood is
# still valid (and so still a replay) after it, on a slow machine too.
W=300

# server_conf FILE [PROTECT]: keys k, l and the knock secret; 22 native
# (k and l), 2222 knock mode, and one more protect entry PROTECT.
server_conf() {
	cat >"$1" <<EOC
control_socket = "$TMP/server.sock";
limits = { replay = 64; };
keys = ( { name = "k"; file = "$K"; }, { name = "l"; file = "$L"; },
	 { name = "legacy"; secret = "$SECRET"; } );
protect = (
	{ port = 22; mode = "native"; keys = [ "k", "l" ]; window = $W; },
	{ port = 2222; mode = "knock"; keys = [ "legacy" ]; }${2:+,
	$2}
);
EOC
	chmod 600 "$1"	# it holds a secret: owner only
}
server_conf "$TMP/knockgw.conf"
start_knockgw "$NS_S" "$TMP/knockgw.conf"
SRV_PID=$KGW_PID

decided() { [ "$(qcounter queued)" = "$(qcounter verdicts)" ]; }
accepted_at_least() { [ "$(counter syn_accepted)" -ge "$1" ]; }

# knock NAME KEYFILE SRC DST TSVAL: one valid native knock for port 22 from
# SRC, answered as prober.py saw it ($TMP/NAME.json); its ISN in $TMP/NAME.isn.
knock() {
	isn native "$2" "$4" 22 "$5" --window $W >"$TMP/$1.isn"
	probe "$1" "$3" "$4" 22 "$(cat "$TMP/$1.isn")" --tsval "$5"
}
# again NAME SRC DST TSVAL: knock NAME's very SYN (ISN, TSval) from SRC.
again() { probe "$1-again" "$2" "$3" 22 "$(cat "$TMP/$1.isn")" --tsval "$4"; }

# flood FIRST COUNT DST SRC|many: COUNT valid knocks with key k, TSvals
# FIRST + i, from SRC or each from its own /64 (2001:db8:0:i::1), all at
# once; then waits for the server to have decided them all.
# The ISNs come from tests/isn/model.py (checked against knock-connect isn
# by the isn suite), all in one process.
flood() {
	PYTHONPATH="$TOP/tests/isn" python3 -c '
import base64, sys, time
import model
key = base64.b64decode(open(sys.argv[1]).read().strip())
first, count, dst, src, window = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5], int(sys.argv[6])
now = int(time.time())
for i in range(1, count + 1):
    s = "2001:db8:0:%x::1" % i if src == "many" else src
    print(first + i, "%08x" % model.isn("native", key, dst, 22, first + i, now=now, window=window), s)
' "$K" "$@" "$W" >"$TMP/flood.txt"
	a0=$(counter syn_accepted)
	in_c python3 "$TOP/tests/netns/lib/synburst.py" --iface vc --src "$C4" --dst "$3" \
		--dport 22 --list "$TMP/flood.txt" --sport-base 30000 --timeout 0.5 >/dev/null
	wait_for 20 accepted_at_least $((a0 + $2)) || true
	wait_for 5 decided || true
}

# Before: the other key holder (l) and a second source with key k knock.
knock before-l "$L" $C4 $S4 101
check "key l's client gets in" answered before-l SA
knock before-k "$K" $C6 $S6 102
check "key k's client from another source gets in" answered before-k SA

# 1. One forged source, 200 valid knocks with key k: the table (64) fills,
# and each knock beyond takes the place of that source's oldest.
a0=$(counter syn_accepted)
flood 1000 200 $S4 192.0.2.77
check "flood from one source: all 200 knocks let through (none refused for a full table)" \
	[ "$(counter syn_accepted)" = $((a0 + 200)) ]
# 2 knocks in the table before, so 62 fill it and 138 displace.
check "flood from one source: 138 displacements, all of the busiest source" \
	[ "$(counter replay_displaced_source)/$(counter replay_displaced_key)" = 138/0 ]
check "flood from one source: logged" \
	grep -q 'replay table full (limits.replay 64): forgot a knock of source 192.0.2.77/32' \
	"$TMP/knockgw-$NS_S.log"
knock after-l "$L" $C4 $S4 201
check "flood from one source: key l's client still gets in" answered after-l SA
knock after-k "$K" $C6 $S6 202
check "flood from one source: key k from another source still gets in" answered after-k SA
r0=$(counter replay_refused)
again before-l $C4B $S4 101
check "flood from one source: key l's earlier knock, replayed elsewhere: still refused" \
	answered before-l-again RA
again before-k $C6B $S6 102
check "flood from one source: key k's other source's knock, replayed elsewhere: refused" \
	answered before-k-again RA
check "... counted as replays" [ "$(counter replay_refused)" = $((r0 + 2)) ]

# 2. 200 forged sources, each its own /64, with key k: the key's oldest go.
a0=$(counter syn_accepted)
d0=$(($(counter replay_displaced_source) + $(counter replay_displaced_key)))
flood 3000 200 $S6 many
check "flood from 200 prefixes: all 200 knocks let through" \
	[ "$(counter syn_accepted)" = $((a0 + 200)) ]
# The first flood's source pays first, while it is further over its share
# (an eighth) than key k over its (a half); then key k pays.
check "flood from 200 prefixes: 200 displacements" \
	[ $(($(counter replay_displaced_source) + $(counter replay_displaced_key))) = $((d0 + 200)) ]
check "... most of them key k's" [ "$(counter replay_displaced_key)" -ge 100 ]
knock after2-l "$L" $C4 $S4 301
check "flood from 200 prefixes: key l's client still gets in" answered after2-l SA
knock after2-k "$K" $C6 $S6 302
check "flood from 200 prefixes: key k from another source still gets in" answered after2-k SA
again after-l $C4B $S4 201
check "flood from 200 prefixes: key l's knock, replayed elsewhere: still refused" \
	answered after-l-again RA
check "the table held its size" sh -c "'$KNOCKGW' status -c '$TMP/status-$NS_S.conf' | \
	grep -q '^replay table 64 entries'"

# 3. Knock mode without timestamps: one ISN for every client.
ts0=$(isn knock "$SECRET" $S4 2222 0)
u0=$(counter replay_unchecked)
probe tsless1 $C4 $S4 2222 "$ts0" --no-ts
check "knock mode, no timestamps: the first client gets in" answered tsless1 SA
probe tsless2 $C4B $S4 2222 "$ts0" --no-ts
check "knock mode, no timestamps: a second client (the same ISN) gets in too" \
	answered tsless2 SA
check "knock mode, no timestamps: no replay check, counted" \
	[ "$(counter replay_unchecked)" = $((u0 + 2)) ]
probe withts1 $C4 $S4 2222 "$(isn knock "$SECRET" $S4 2222 777)" --tsval 777
probe withts2 $C4B $S4 2222 "$(isn knock "$SECRET" $S4 2222 777)" --tsval 777
check "knock mode with timestamps: a knock gets in" answered withts1 SA
check "knock mode with timestamps: its replay from elsewhere is still refused" \
	answered withts2 RA
stop_knockgw "$SRV_PID"

# 4. timestamps = "required": a valid knock without one is refused.
server_conf "$TMP/knockgw2.conf" \
	"{ port = 2223; mode = \"native\"; keys = [ \"k\" ]; timestamps = \"required\"; }"
start_knockgw "$NS_S" "$TMP/knockgw2.conf"
in_s socat TCP6-LISTEN:2223,ipv6only=0,fork,reuseaddr SYSTEM:true >/dev/null 2>&1 &
PIDS="$PIDS $!"
listening 2223
probe req1 $C4 $S4 2223 "$(isn native "$K" $S4 2223 0)" --no-ts
check "timestamps required: a valid knock without one gets the closed-port RST" \
	answered req1 RA
check "... counted (ts_missing)" [ "$(counter ts_missing)" = 1 ]
probe req2 $C6 $S6 2223 "$(isn native "$K" $S6 2223 555)" --tsval 555
check "timestamps required: with one it gets in" answered req2 SA
check "the server's daemon stayed up" kill -0 "$KGW_PID"
finish
