#!/bin/sh
# `knockgw status --json`: the figures of `knockgw status` as one JSON
# object (field names in knockgw(8)).  One valid knock and one plain SYN
# move known counters; the JSON shows them (per counter and per port),
# agrees with the text, and follows a reload (generation, reloads).  Then a
# clean stop: exit status 0, the table removed, the counters logged with
# the same figures, "stopped".
#
#   client ns $NS_C                       server ns $NS_S
#   +-----------------------+             +-----------------------------+
#   | prober.py -> :22      |---- veth ---| sshd :22; knockgw protects  |
#   |   one knock, one SYN  |             |   it (native); status --json|
#   +-----------------------+             +-----------------------------+
. "$(dirname "$0")/lib/lib.sh"

make_topology
quiet_client_rsts
start_sshd
K=$(key_file k)
cat >"$TMP/knockgw.conf" <<EOC
control_socket = "$TMP/server.sock";
keys = ( { name = "k"; file = "$K"; } );
protect = ( { port = 22; mode = "native"; keys = [ "k" ]; } );
EOC
start_knockgw "$NS_S" "$TMP/knockgw.conf"
LOG=$TMP/knockgw-$NS_S.log

status_json() { # -> $TMP/status.json, and its exit status
	in_s "$KNOCKGW" status --json -c "$TMP/knockgw.conf" >"$TMP/status.json"
}
J() { json "$TMP/status.json" "$1"; }

check "status --json answers before any traffic" status_json
check "it is one JSON object" [ "$(J 'type(j).__name__')" = dict ]
check "no knock yet" [ "$(J "j['server']['syn_accepted']")" = 0 ]
check "generation 0, no reload" [ "$(J "(j['generation'], j['reloads'])")" = "(0, 0)" ]

SPORT=41000
isn=$("$KC" isn --mode native --key-file "$K" --dst $S4 --port 22 --tsval $((SPORT + 1)))
probe knock $C4 $S4 22 "$isn" --tsval $((SPORT + 1))
check "a valid knock gets SYN-ACK" [ "$(flags_of knock)" = SA ]
probe plain $C4 $S4 22 01020304
check "a plain SYN gets the closed-port RST" [ "$(flags_of plain)" = RA ]

check "status --json after the traffic" status_json
check "server.syn_accepted is 1" [ "$(J "j['server']['syn_accepted']")" = 1 ]
check "server.syn_refused is 1" [ "$(J "j['server']['syn_refused']")" = 1 ]
check "ports[0]: port 22, native, 1 accepted, 1 refused" \
	[ "$(J "[(p['port'], p['mode'], p['integrity'], p['accepted'], p['refused']) for p in j['ports']]")" = \
	  "[(22, 'native', False, 1, 1)]" ]
check "queue.received counts both SYNs" [ "$(J "j['queue']['received'] >= 2")" = True ]
check "config: 1 key, 1 protected port, table knockgw" \
	[ "$(J "(j['config']['keys'], j['config']['protected_ports'], j['config']['table'])")" = \
	  "(1, 1, 'knockgw')" ]
check "config: this file" [ "$(J "j['config']['path']")" = "$TMP/knockgw.conf" ]
check "control: the status requests are counted" [ "$(J "j['control']['ctl_status'] >= 2")" = True ]

# Every counter line of the text has its value in the JSON (no traffic
# between the two: the counters stand still; control ones excepted).
in_s "$KNOCKGW" status -c "$TMP/knockgw.conf" >"$TMP/status.txt"
check "status --json agrees with status, counter by counter" python3 - "$TMP/status.txt" "$TMP/status.json" <<'PY'
import json, sys
text = open(sys.argv[1]).read().splitlines()
j = json.load(open(sys.argv[2]))
n = 0
for line in text:
    f = line.split()
    if len(f) == 3 and f[0] in ("server", "drop", "client"):
        if j[f[0]].get(f[1]) != int(f[2]):
            sys.exit("%s: json has %r" % (line, j[f[0]].get(f[1])))
        n += 1
if n < 40:
    sys.exit("only %d counter lines" % n)
PY

kill -HUP "$KGW_PID"
check "a reload" wait_for 10 grep -q '^reloaded' "$LOG"
check "status --json after the reload" status_json
check "generation 1, 1 reload, none refused" \
	[ "$(J "(j['generation'], j['reloads'], j['reloads_refused'])")" = "(1, 1, 0)" ]
check "the counters carry over" [ "$(J "j['server']['syn_accepted']")" = 1 ]

# A clean stop.
stops=$(grep -c '^counters:' "$LOG" || true)
kill -TERM "$KGW_PID"
if wait "$KGW_PID"; then rc=0; else rc=$?; fi
check "SIGTERM: exit status 0" [ "$rc" = 0 ]
check "the table stays, hiding (on_stop hide)" has_table
check "the counters are logged once at stop" [ "$(grep -c '^counters:' "$LOG")" = $((stops + 1)) ]
check "with the figures status showed" sh -c "grep '^counter syn_accepted=' '$LOG' | tail -1 | grep -qx 'counter syn_accepted=1'"
check "then: stopped" sh -c "tail -1 '$LOG' | grep -qx stopped"
check "knockgw status --json then says it is not running (exit 3)" \
	sh -c "ip netns exec $NS_S $KNOCKGW status --json -c $TMP/knockgw.conf >/dev/null 2>&1; [ \$? = 3 ]"
finish
