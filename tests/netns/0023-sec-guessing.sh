#!/bin/sh
# Guessing: refused knocks are counted per source prefix.  A source that
# sends guessing.threshold refused knocks within guessing.window is logged
# once (info, naming it) and counted; without a penalty (the default) its
# next valid knock still passes; with guessing.penalty its SYNs get the
# closed-port answer unverified for that long, while other sources knock
# as usual.
#
#   client ns $NS_C                          server ns $NS_S
#   +-----------------------------+          +-------------------------+
#   | vc 192.0.2.1 (the guesser)  |-- veth --| sshd :22, native, knockgw|
#   |    192.0.2.3 (another user) |          +-------------------------+
#   +-----------------------------+
. "$(dirname "$0")/lib/lib.sh"

make_topology
quiet_client_rsts
start_sshd
U4=192.0.2.3
in_c ip addr add $U4/24 dev vc
K=$(key_file k)
LOG=$TMP/knockgw-$NS_S.log

conf() { # PENALTY
	key_conf "$TMP/knockgw.conf" "$(entry 22)" "control_socket = \"$TMP/server.sock\";" \
		"guessing = { threshold = 20; window = 60; penalty = $1; };"
}

# guesses SPORT_BASE: 20 SYNs with ISNs that are no knock, at once.
guesses() {
	: >"$TMP/guesses.txt"
	for i in $(seq 1 20); do echo "$i 0badc0de" >>"$TMP/guesses.txt"; done
	in_c python3 "$TOP/tests/netns/lib/synburst.py" --iface vc --src $C4 --dst $S4 --dport 22 \
		--list "$TMP/guesses.txt" --sport-base "$1" >"$TMP/guesses.json"
}

conf 0
start_knockgw "$NS_S" "$TMP/knockgw.conf"
guesses 43000
check "20 guesses: each answered like a closed port" \
	[ "$(json "$TMP/guesses.json" "j['answers'].get('RA', 0)")" = 20 ]
check "the source is logged once, by its prefix" \
	wait_for 5 grep -q "source 192.0.2.1/32: 20 refused knocks within 60 s$" "$LOG"
check "... and counted (guessers)" [ "$(counter guessers)" = 1 ]
check "no penalty by default: the guesser's valid knock passes" knock_gets SA "$K" 22 $C4 $S4

stop_knockgw
conf 30
start_knockgw "$NS_S" "$TMP/knockgw.conf"
guesses 43100
check "with a penalty: logged as such" \
	wait_for 5 grep -q "source 192.0.2.1/32: 20 refused knocks within 60 s; its SYNs get" "$LOG"
check "with a penalty: the guesser's valid knock gets the closed-port RST" \
	knock_gets RA "$K" 22 $C4 $S4
check "... counted as penalized" [ "$(counter penalized)" = 1 ]
check "another source's valid knock passes meanwhile" knock_gets SA "$K" 22 $U4 $S4
check "the daemon is still running" kill -0 "$KGW_PID"
finish
