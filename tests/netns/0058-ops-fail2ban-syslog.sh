#!/bin/sh
# fail2ban on the plain log: the lines the daemon really sends to syslog.
#
#   client ns $NS_C                 server ns $NS_S, a mount namespace of its own
#   +--------------------+          +-------------------------------------------+
#   | vc 192.0.2.1       |-- veth --| vs 192.0.2.2, sshd :22                    |
#   | synburst.py (the   |          | /dev a tmpfs: /dev/log is logsink.py;     |
#   |  guesser), prober  |          | /run a tmpfs: no journal                  |
#   +--------------------+          | knockgw without -f: syslog(3)             |
#                                   +-------------------------------------------+
#
# Without -f and without a journal the daemon logs through syslog(3); the
# datagrams it sends to /dev/log, written out as rsyslog would (the
# priority tag dropped), go to fail2ban-regex with the shipped filter: the
# guessing line matches, with the guesser's address, and nothing else does.
# The jail example, its plain-log jail enabled on that file, passes
# fail2ban-client's configuration test.
# sh -c '...' sh ARGS: the single quotes are meant (SC2016).
# shellcheck disable=SC2016
. "$(dirname "$0")/lib/lib.sh"

make_topology
quiet_client_rsts
start_sshd
K=$(key_file k)
CONF=$TMP/knockgw.conf
key_conf "$CONF" "$(entry 22)" "control_socket = \"$TMP/server.sock\";" \
	"guessing = { threshold = 8; window = 60; };"
grep '^control_socket' "$CONF" >"$TMP/status-$NS_S.conf"
chmod 600 "$TMP/status-$NS_S.conf"
S=$TMP/syslog.jsonl
: >"$S"

# The daemon, not in the foreground, with a /dev of its own: the nodes a
# process needs, and /dev/log the sink.
ip netns exec "$NS_S" unshare -m --propagation private sh -c '
	mount -t tmpfs -o mode=0755 kgw-run /run || exit 1
	mount -t tmpfs -o mode=0755 kgw-dev /dev || exit 1
	mknod -m 666 /dev/null c 1 3 && mknod -m 666 /dev/zero c 1 5 &&
		mknod -m 666 /dev/urandom c 1 9 && mknod -m 666 /dev/random c 1 8 || exit 1
	python3 "$1" syslog /dev/log "$2" 300 &
	echo $! >"$3"
	i=0
	while [ ! -S /dev/log ] && [ $i -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	exec "$4" -c "$5"' sh "$TOP/tests/netns/lib/logsink.py" "$S" "$TMP/sink.pid" "$KNOCKGW" "$CONF" \
	>"$TMP/stderr.log" 2>&1 &
KGW_PID=$!
PIDS="$PIDS $KGW_PID"
wait_for 5 test -s "$TMP/sink.pid"
PIDS="$PIDS $(cat "$TMP/sink.pid")"
check "syslog: the daemon's ready line" wait_for 10 grep -q 'knockgw\[[0-9]*\]: ready: ' "$S"

check "a knock gets in (its line is logged too)" knock_gets SA "$K" 22
: >"$TMP/guesses.txt"
for i in $(seq 1 8); do echo "$i 0badc0de" >>"$TMP/guesses.txt"; done
in_c python3 "$TOP/tests/netns/lib/synburst.py" --iface vc --src $C4 --dst $S4 --dport 22 \
	--list "$TMP/guesses.txt" --sport-base 43000 >"$TMP/guesses.json"
check "syslog: the guessing line" \
	wait_for 5 grep -q 'knockgw\[[0-9]*\]: source 192.0.2.1/32: 8 refused knocks within 60 s' "$S"
check "nothing on stderr" [ ! -s "$TMP/stderr.log" ]

# What rsyslog writes of a datagram "<PRI>Mmm dd hh:mm:ss ident[pid]: msg":
# the tag's priority dropped, the host name put before the identifier.
python3 - "$S" >"$TMP/syslog.log" <<-'EOF'
import json, re, sys
for line in open(sys.argv[1]):
    m = re.match(r"<\d+>(\w{3} [ \d]\d \d\d:\d\d:\d\d) (.*)", json.loads(line)["line"])
    print("%s kgw-host %s" % (m.group(1), m.group(2).rstrip("\n")))
EOF
sed 's/^/# /' "$TMP/syslog.log"
F2B=$(fail2ban_etc) || F2B=""
check "fail2ban is there (make deps)" [ -n "$F2B" ]
cp -R "$F2B" "$TMP/f2b"
cp "$TOP/contrib/fail2ban/filter.d/knockgw.conf" "$TMP/f2b/filter.d/"
fail2ban-regex -v "$TMP/syslog.log" "$TMP/f2b/filter.d/knockgw.conf" >"$TMP/f2b.out" 2>&1 || true
grep -A1 "^Lines:" "$TMP/f2b.out" | sed 's/^/# /'
check "fail2ban-regex: one line matched" grep -q "^Lines: .* 1 matched" "$TMP/f2b.out"
check "... the guesser's address" grep -q "^|  *192\.0\.2\.1  " "$TMP/f2b.out"
check "... not the accepted knock's" grep -q "^|  .*knock from 192.0.2.1 port .* accepted" "$TMP/f2b.out"

# The jail example: its plain-log jail on that file, the rest as shipped.
rm -f "$TMP/f2b/jail.d/"*
sed -e '/^\[knockgw-syslog\]/,$ s/^enabled   = false/enabled   = true/' \
	-e "s|^logpath   = .*|logpath   = $TMP/syslog.log|" \
	"$TOP/contrib/fail2ban/jail.d/knockgw.conf" >"$TMP/f2b/jail.d/knockgw.local"
check "the jail example passes fail2ban-client -t" \
	sh -c 'fail2ban-client -c "$1" -t >"$2" 2>&1' sh "$TMP/f2b" "$TMP/f2bc.out"
tail -n 1 "$TMP/f2bc.out" | sed 's/^/# /'
finish
