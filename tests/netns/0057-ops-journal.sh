#!/bin/sh
# The journal: events with fields, through the native protocol.
#
#   client ns $NS_C                 server ns $NS_S, a mount namespace of its own
#   +--------------------+          +-------------------------------------------+
#   | vc 192.0.2.1       |-- veth --| vs 192.0.2.2, sshd :22 and :2222 (integ.) |
#   | prober.py,         |          | /run a tmpfs: /run/systemd/journal/socket |
#   | synburst.py        |          |  is logsink.py, reading the datagrams     |
#   +--------------------+          | knockgw -f, $JOURNAL_STREAM = its stderr  |
#                                   +-------------------------------------------+
#
# With $JOURNAL_STREAM naming its stderr (as systemd sets it for a service)
# the daemon sends every message to the journal socket, stderr stays empty,
# and each event a log tool acts on has its fields: knock accepted (source,
# port, key), knock refused (debug, -v), a source past the guessing
# threshold (its prefix), an integrity failure (source, port, key), a
# reload and a refused reload; MESSAGE_ID per kind, PRIORITY, the plain
# MESSAGE as stderr would have it.  fail2ban's filter, fed the lines its
# systemd backend makes of these entries, bans the guesser only, and its
# journalmatch is the guessing events' MESSAGE_ID.  Under -f without
# $JOURNAL_STREAM (a terminal), or with one naming another file, nothing
# goes to the journal: stderr has it all.
# sh -c '...' sh ARGS: the single quotes are meant (SC2016).
# shellcheck disable=SC2016
. "$(dirname "$0")/lib/lib.sh"

make_topology
quiet_client_rsts
start_sshd
start_sshd2
K=$(key_file k)
CONF=$TMP/knockgw.conf
LOG=$TMP/knockgw-$NS_S.log
key_conf "$CONF" "$(entry 22), $(entry 2222 "integrity_len = 16;")" \
	"control_socket = \"$TMP/server.sock\";" "guessing = { threshold = 5; window = 60; };"
grep '^control_socket' "$CONF" >"$TMP/status-$NS_S.conf"
chmod 600 "$TMP/status-$NS_S.conf"

# start_journaled OUT STREAM: the daemon in a mount namespace whose
# /run/systemd/journal/socket is logsink.py writing to OUT, with
# JOURNAL_STREAM=STREAM ("" for none); stderr to $LOG (emptied first).
start_journaled() {
	: >"$LOG"
	: >"$1"
	rm -f "$TMP/sink.pid"
	ip netns exec "$NS_S" unshare -m --propagation private sh -c '
		mount -t tmpfs -o mode=0755 kgw-run /run || exit 1
		mkdir -p /run/systemd/journal
		python3 "$1" journal /run/systemd/journal/socket "$2" 300 &
		echo $! >"$3"
		i=0
		while [ ! -S /run/systemd/journal/socket ] && [ $i -lt 50 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		if [ -n "$4" ]; then export JOURNAL_STREAM="$4"; else unset JOURNAL_STREAM; fi
		exec "$5" -f -v -c "$6"' sh "$TOP/tests/netns/lib/logsink.py" "$1" "$TMP/sink.pid" "$2" \
		"$KNOCKGW" "$CONF" >>"$LOG" 2>&1 &
	KGW_PID=$!
	PIDS="$PIDS $KGW_PID"
	wait_for 5 test -s "$TMP/sink.pid"
	PIDS="$PIDS $(cat "$TMP/sink.pid")"
}

# jfind OUT EVENT EXPR: some record in OUT of KNOCKGW_EVENT EVENT (or, with
# EVENT "-", any record) has EXPR true (a Python expression on r); prints
# the first that does.  jwait SECONDS OUT EVENT EXPR: the same, OUT read
# again every 0.1 s until SECONDS have passed (one interpreter for the
# whole wait, so that a record that never comes costs SECONDS, not
# SECONDS * 10 interpreter starts).
jwait() {
	python3 - "$@" <<-'EOF'
	import json, sys, time
	secs, out, ev, expr = sys.argv[1:5]
	deadline = time.monotonic() + float(secs)
	while True:
	    for line in open(out):
	        try:
	            r = json.loads(line)
	        except ValueError:  # a line still being written: the next look has it
	            continue
	        if (ev == "-" or r.get("KNOCKGW_EVENT") == ev) and eval(expr, {"r": r}):
	            print("# " + json.dumps(r, sort_keys=True))
	            sys.exit(0)
	    if time.monotonic() >= deadline:
	        sys.exit(1)
	    time.sleep(0.1)
	EOF
}
jfind() { jwait 0 "$@"; }

J=$TMP/journal.jsonl
: >"$LOG"
start_journaled "$J" "$(stat -c '%d:%i' "$LOG")"
check "the daemon's messages go to the journal: ready" \
	jwait 10 "$J" - 'r["MESSAGE"].startswith("ready:")'
check "... with PRIORITY and SYSLOG_IDENTIFIER" \
	jfind "$J" - 'r["MESSAGE"].startswith("ready:") and r["PRIORITY"] == "6" and r["SYSLOG_IDENTIFIER"] == "knockgw"'
check "... and the sender is the daemon" jfind "$J" - "r.get('_PID') == '$KGW_PID'"

check "a knock gets in" knock_gets SA "$K" 22
check "knock_accepted: source, port, key, MESSAGE_ID, the plain message" jwait 5 "$J" knock_accepted \
	'r["KNOCKGW_SOURCE"] == "192.0.2.1" and r["KNOCKGW_PORT"] == "22" and r["KNOCKGW_KEY"] == "k" and r["MESSAGE_ID"] == "05452ce00cb4492cbc214f7e34694e22" and r["PRIORITY"] == "6" and __import__("re").fullmatch(r"knock from 192\.0\.2\.1 port \d+ to port 22 accepted with key \"k\"", r["MESSAGE"])'

check "a plain SYN is refused" plain_gets RA
check "knock_refused (debug): source, port, no key" jwait 5 "$J" knock_refused \
	'r["KNOCKGW_SOURCE"] == "192.0.2.1" and r["KNOCKGW_PORT"] == "22" and "KNOCKGW_KEY" not in r and r["PRIORITY"] == "7" and r["MESSAGE_ID"] == "7cad351ebd12455fad583a1280dc39f0" and r["MESSAGE"].startswith("refused SYN from 192.0.2.1 port ")'

# An integrity flow whose bytes are not the ones its knock covers.
printf 'SSH-2.0-Original\r\n' >"$TMP/orig.data"
printf 'SSH-2.0-Forgery!\r\n' >"$TMP/forged.data"
v=$(isn native "$K" $S4 2222 77 --integrity-len 16 --payload-file "$TMP/orig.data")
# shellcheck disable=SC2086 # PROBER is a command and its script
in_c $PROBER connect --iface vc --src $C4 --dst $S4 --sport 42001 --dport 2222 --isn "0x$v" \
	--tsval 77 --data-file "$TMP/forged.data" --timeout 3 --stop-when-acked >"$TMP/forged.json"
check "forged integrity bytes: the connection is reset" got_rst forged
check "integrity_failed: source, port, key" jwait 5 "$J" integrity_failed \
	'r["KNOCKGW_SOURCE"] == "192.0.2.1" and r["KNOCKGW_PORT"] == "2222" and r["KNOCKGW_KEY"] == "k" and r["PRIORITY"] == "5" and r["MESSAGE_ID"] == "4973a8cfc7ae4d808618804e746dc37c" and r["MESSAGE"].startswith("integrity flow from 192.0.2.1 port 42001 to port 2222: integrity check failed")'

: >"$TMP/guesses.txt"
for i in $(seq 1 5); do echo "$i 0badc0de" >>"$TMP/guesses.txt"; done
in_c python3 "$TOP/tests/netns/lib/synburst.py" --iface vc --src $C4 --dst $S4 --dport 22 \
	--list "$TMP/guesses.txt" --sport-base 43000 >"$TMP/guesses.json"
check "guessing: the source's prefix, no port, no key" jwait 5 "$J" guessing \
	'r["KNOCKGW_SOURCE"] == "192.0.2.1/32" and "KNOCKGW_PORT" not in r and "KNOCKGW_KEY" not in r and r["PRIORITY"] == "6" and r["MESSAGE_ID"] == "ae3f7f7271c24a6ca5c6a7ab20a1e5f7" and r["MESSAGE"] == "source 192.0.2.1/32: 5 refused knocks within 60 s"'

kill -HUP "$KGW_PID"
check "reloaded" jwait 10 "$J" reloaded \
	'r["MESSAGE"].startswith("reloaded: 2 protected port(s)") and r["MESSAGE_ID"] == "052c55609ca4416abea51354da7dca87" and "KNOCKGW_SOURCE" not in r'
cp "$CONF" "$TMP/good.conf"
echo "bogus = 1;" >>"$CONF"
kill -HUP "$KGW_PID"
check "reload_refused, at warning" jwait 10 "$J" reload_refused \
	'r["MESSAGE"].startswith("reload refused: ") and r["PRIORITY"] == "4" and r["MESSAGE_ID"] == "b5e6aea846304819a789b32f6cbdd2d2"'
cp "$TMP/good.conf" "$CONF"
check "the loader's message went to the journal too" \
	jfind "$J" - '"unknown setting \"bogus\"" in r["MESSAGE"] and r["PRIORITY"] == "4"'
check "stderr stayed empty: the journal took every message" [ ! -s "$LOG" ]

# fail2ban's systemd backend hands its filter "HOST IDENT[PID]: MESSAGE"
# (formatJournalEntry) with the entry's time: the same lines, from these.
python3 - "$J" >"$TMP/jlines.log" <<-'EOF'
import json, sys, time
for line in open(sys.argv[1]):
    r = json.loads(line)
    print(time.strftime("%Y-%m-%d %H:%M:%S") + " kgw-host %s[%s]: %s" %
          (r["SYSLOG_IDENTIFIER"], r["_PID"], r["MESSAGE"]))
EOF
F2B=$(fail2ban_etc) || F2B=""
check "fail2ban is there (make deps)" [ -n "$F2B" ]
mkdir -p "$TMP/f2b/filter.d"
cp "$F2B/filter.d/common.conf" "$TOP/contrib/fail2ban/filter.d/knockgw.conf" "$TMP/f2b/filter.d/"
fail2ban-regex -v "$TMP/jlines.log" "$TMP/f2b/filter.d/knockgw.conf" >"$TMP/f2b.out" 2>&1 || true
check "fail2ban-regex: one line matched (the guessing one)" grep -q "^Lines: .* 1 matched" "$TMP/f2b.out"
check "... the guesser's address" grep -q "^|  *192\.0\.2\.1  " "$TMP/f2b.out"
check "... the knock lines did not" grep -q "knock from 192.0.2.1 port .* accepted" "$TMP/f2b.out"
check "the filter's journalmatch is the guessing events' MESSAGE_ID" \
	grep -qx "journalmatch = MESSAGE_ID=ae3f7f7271c24a6ca5c6a7ab20a1e5f7" \
	"$TOP/contrib/fail2ban/filter.d/knockgw.conf"
grep -A3 "^Lines:" "$TMP/f2b.out" | sed 's/^/# /'
stop_knockgw "$KGW_PID"

# -f on a terminal ($JOURNAL_STREAM unset) or another file's stream: stderr.
for how in none other; do
	J2=$TMP/journal-$how.jsonl
	if [ $how = none ]; then s=""; else s=$(stat -c '%d:%i' "$TMP/good.conf"); fi
	start_journaled "$J2" "$s"
	check "JOURNAL_STREAM $how: ready on stderr" wait_for 10 grep -q '^ready:' "$LOG"
	check "JOURNAL_STREAM $how: a knock's line on stderr" knock_gets SA "$K" 22
	check "JOURNAL_STREAM $how: ... its line" wait_for 5 grep -q '^knock from 192.0.2.1 port .* accepted' "$LOG"
	check "JOURNAL_STREAM $how: nothing went to the journal" [ ! -s "$J2" ]
	stop_knockgw "$KGW_PID"
done
finish
