#!/bin/sh
# Fault: memory caps reached.  The caps are refusals, counted and logged,
# never growth, and they fail closed:
#   - integrity hold (limits.hold_flow_bytes = 1024): a flow whose 600
#     covered bytes come in 40 small segments cannot all be held; the rest
#     are dropped (hold_cap) and the flow is reset at integrity_timeout; the
#     service never reads one of its bytes.  The same 600 bytes in two
#     segments fit and arrive.
#   - replay table (limits.replay = 64, replay_ttl = 15 s): 64 distinct valid
#     knocks fill it and pass; 6 more pass too, each taking the place of
#     the oldest knock of the busiest source (replay_displaced_source,
#     counted, logged), never refused; once the entries expire and are
#     collected, valid knocks pass again.
#
#   client ns $NS_C                       server ns $NS_S
#   +-----------------------+             +-----------------------------------+
#   | prober.py connect     |---- veth ---| sink.py :2200 (keeps every byte), |
#   |   -> :2200 integrity  |             |   integrity_len 600, no replay    |
#   | synburst.py -> :2222  |             | sshd :2222, knock mode,           |
#   +-----------------------+             |   replay_ttl 15                   |
#                                         +-----------------------------------+
. "$(dirname "$0")/lib/lib.sh"

make_topology
quiet_client_rsts
start_sshd
start_sshd2
start_sink 2200

K=$(key_file k)
cat >"$TMP/knockgw.conf" <<EOC
control_socket = "$TMP/server.sock";
limits = { replay = 64; hold_bytes = 4096; hold_flow_bytes = 1024; integrity_timeout = 2; };
keys = ( { name = "k"; file = "$K"; }, { name = "legacy"; secret = "$SECRET"; } );
protect = (
	{ port = 2200; mode = "native"; keys = [ "k" ]; integrity_len = 600; replay = false; },
	{ port = 2222; mode = "knock"; keys = [ "legacy" ]; replay_ttl = 15; }
);
EOC
chmod 600 "$TMP/knockgw.conf"	# it holds a secret: owner only
start_knockgw "$NS_S" "$TMP/knockgw.conf"
LOG=$TMP/knockgw-$NS_S.log

# ---------------------------------------------------------------- hold cap
SPORT=41500
# connect NAME SPLITS: knock for 600 bytes, send them cut at SPLITS.
connect() {
	SPORT=$((SPORT + 1))
	python3 -c "import sys; sys.stdout.write(('$1:' + 'x' * 600)[:600])" >"$TMP/$1.data"
	c_isn=$("$KC" isn --mode native --key-file "$K" --dst $S4 --port 2200 --tsval $SPORT \
		--integrity-len 600 --payload-file "$TMP/$1.data")
	in_c $PROBER connect --iface vc --src $C4 --dst $S4 --sport $SPORT --dport 2200 \
		--isn "0x$c_isn" --tsval $SPORT --data-file "$TMP/$1.data" --split "$2" \
		--timeout 5 --stop-when-acked >"$TMP/$1.json"
}
acked() { [ "$(json "$TMP/$1.json" "j['max_ack']")" = 600 ]; }
was_reset() { [ "$(json "$TMP/$1.json" "j['rst']")" = True ] && ! acked "$1"; }
unread() { ! grep -q "$1:" "$TMP/sink.bin"; }	# the service got none of NAME's bytes

# 40 segments of 15 bytes: each held packet is 67 bytes (IP, TCP with a
# timestamp, 15 bytes), so the 16th no longer fits in 1024.
connect many "$(seq -s, 15 15 585)"
check "40 small segments: the flow is reset, nothing acked" was_reset many
check "40 small segments: the segments beyond the cap were dropped (hold_cap)" \
	[ "$(counter hold_cap)" -ge 20 ]
check "40 small segments: reset at the integrity timeout" [ "$(counter integ_timeout)" = 1 ]
check "40 small segments: the service read none of its bytes" unread many

connect two 300
check "two segments of 300: acked" acked two
check "two segments of 300: the service read exactly the 600 bytes" \
	wait_for 5 sh -c "grep -q two: '$TMP/sink.bin' && [ \$(wc -c <'$TMP/sink.bin') = 600 ]"
check "integrity successes counted" [ "$(counter integ_ok)" = 1 ]

connect many2 "$(seq -s, 15 15 585)"
check "and again: the capped flow is reset" was_reset many2
check "and again: the service read none of its bytes" unread many2
# Held packets get their verdict too: nothing stays queued.
all_decided() { [ "$(qcounter queued)" = "$(qcounter verdicts)" ]; }
check "every queued packet got its verdict (dropped ones included)" wait_for 5 all_decided

# -------------------------------------------------------------- replay cap
# Distinct valid knocks (knock mode: the ISN changes with the TSVAL).
knocks() { # FIRST LAST -> $TMP/knocks.txt
	: >"$TMP/knocks.txt"
	for i in $(seq "$1" "$2"); do
		echo "$((5000 + i)) $("$KC" isn --mode knock --secret "$SECRET" --dst $S4 \
			--port 2222 --tsval $((5000 + i)))" >>"$TMP/knocks.txt"
	done
}
burst() { # NAME SPORT_BASE: the knocks in $TMP/knocks.txt, all at once
	in_c python3 "$TOP/tests/netns/lib/synburst.py" --iface vc --src $C4 --dst $S4 \
		--dport 2222 --list "$TMP/knocks.txt" --sport-base "$2" >"$TMP/$1.json"
	echo "# $1: $(json "$TMP/$1.json" "j['answers']")"
}
answers() { json "$TMP/$1.json" "j['answers'].get('$2', 0)"; }

# Both lists made before the fill: the entries must not expire (and be
# collected) before the status after the second burst reads the count.
knocks 65 70
mv "$TMP/knocks.txt" "$TMP/knocks-over.txt"
knocks 1 64
burst fill 46000
check "replay table: 64 distinct knocks fill it, all pass" [ "$(answers fill SA)" = 64 ]
in_s "$KNOCKGW" status -c "$TMP/knockgw.conf" >"$TMP/status.out" 2>&1
check "replay table: knockgw status shows 64 entries" grep -q '^replay table 64 entries' "$TMP/status.out"
mv "$TMP/knocks-over.txt" "$TMP/knocks.txt"
burst over 46100
check "replay table full: 6 more knocks pass all the same" [ "$(answers over SA)" = 6 ]
check "replay table full: each displaced the busiest source's oldest (counted)" \
	[ "$(counter replay_displaced_source)" = 6 ]
in_s "$KNOCKGW" status -c "$TMP/knockgw.conf" >"$TMP/status.out" 2>&1
check "replay table full: still 64 entries" grep -q '^replay table 64 entries' "$TMP/status.out"
# The 64 acceptances used up the peer messages' rate limit; a full table
# has its own warning.
check "replay table full: and logged" grep -q '^replay table full (limits.replay 64)' "$LOG"
check "replay table full: nothing was refused" \
	[ "$(counter syn_refused)" = 0 ] && [ "$(counter replay_refused)" = 0 ]

# Entries live 15 s and are collected every 5 s: a fresh knock passes again
# within about 20 s of the fill (bounded: 40 tries, 1 s apart).
SPORT=47000
again=0
for i in $(seq 1 40); do
	SPORT=$((SPORT + 1))
	isn=$("$KC" isn --mode knock --secret "$SECRET" --dst $S4 --port 2222 --tsval $((6000 + i)))
	in_c $PROBER probe --iface vc --src $C4 --dst $S4 --sport $SPORT --dport 2222 \
		--seq "0x$isn" --tsval $((6000 + i)) >"$TMP/after.json"
	if [ "$(json "$TMP/after.json" "(j['answer'] or {}).get('flagstr')")" = SA ]; then
		again=1
		break
	fi
	sleep 1
done
check "replay table: after the entries expire a valid knock passes again" [ $again = 1 ]
in_c $PROBER probe --iface vc --src $C4 --dst $S4 --sport $((SPORT + 1)) --dport 2222 \
	--seq 0x01020304 --tsval 1 >"$TMP/plain.json"
check "replay table: a plain SYN is still refused" \
	[ "$(json "$TMP/plain.json" "(j['answer'] or {}).get('flagstr')")" = RA ]
check "the daemon is still running" kill -0 "$KGW_PID"
finish
