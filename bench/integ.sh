# bench/integ.sh - the integrity flood phase of bench/run.sh; sourced by it
# (its helpers, $TMP, $NS_C, $NS_S, $PIDS, res, start_kgw, ...), not run.
#
# integ: a key holder's flood of integrity flows that never complete, and
# how long a real user's ssh login through knock-connect takes meanwhile.
# In the pair of run.sh (client ns vc 192.0.2.1, server ns vs 192.0.2.2,
# the client ns owning 203.0.113.0/24 on lo):
#   server ns: sshd :22 and a listener :2200 (accepts nothing: the kernel
#              completes the handshakes), knockgw protecting both in
#              integrity mode (integrity_len 20), default queue and limits
#              (queue 30, maxlen 4096, integrity_timeout 10)
#   client ns: a client-role knockgw (queue 31) knocking :22 with
#              integrity_len 20; ssh with knock-connect as its ProxyCommand
#   the flood: tests/netns/lib/integflood.py from INTEG_SOURCES addresses of
#              203.0.113.0/24 (each with its own valid knock, replayed from
#              its own ports, new ones each round), INTEG_FLOWS connections
#              each (4096 in all at most), INTEG_SEGS
#              one-byte segments each past the checked range, one round
#              every 0.5 s: flows that hold the queue and then time out or
#              are evicted while their segments keep coming
#   integ_flood_login_ratio = median login time during the flood / median
#   login time without it (INTEG_LOGINS logins each, FLOOD_REPS rounds);
#   the kernel's queue-full drops during the flood are shown beside.

INTEG_SOURCES=${BENCH_INTEG_SOURCES:-20}
INTEG_FLOWS=${BENCH_INTEG_FLOWS:-200}
INTEG_SEGS=${BENCH_INTEG_SEGS:-10}
INTEG_LOGINS=${BENCH_INTEG_LOGINS:-3}

# integ_sshd: an sshd on port 22 of the server ns, root with a user key.
integ_sshd() {
	mkdir -p /run/sshd
	ssh-keygen -q -t ed25519 -N '' -f "$TMP/hostkey"
	ssh-keygen -q -t ed25519 -N '' -f "$TMP/userkey"
	cp "$TMP/userkey.pub" "$TMP/authorized_keys"
	cat >"$TMP/sshd_config" <<-EOC
	Port 22
	ListenAddress 0.0.0.0
	HostKey $TMP/hostkey
	PidFile $TMP/sshd.pid
	AuthorizedKeysFile $TMP/authorized_keys
	StrictModes no
	PermitRootLogin prohibit-password
	PasswordAuthentication no
	KbdInteractiveAuthentication no
	UsePAM no
	EOC
	in_s /usr/sbin/sshd -D -e -f "$TMP/sshd_config" >"$TMP/sshd.log" 2>&1 &
	PIDS="$PIDS $!"
	wait_until 10 in_s sh -c "ss -ltn | grep -q ':22 '" || die "sshd did not start"
}

# integ_login: one ssh login through knock-connect; prints its time in ms,
# or nothing when it failed.
integ_login() {
	il_t0=$(date +%s%N)
	il_out=$(in_c timeout 30 ssh -o BatchMode=yes -o StrictHostKeyChecking=no \
		-o UserKnownHostsFile=/dev/null -o ConnectTimeout=20 -i "$TMP/userkey" \
		-o "ProxyCommand=$KC -s $TMP/ic.conf.sock -w 20 %h %p" "root@$S4" echo in \
		2>>"$TMP/integ-ssh.err") || true
	[ "$il_out" = in ] && echo $((($(date +%s%N) - il_t0) / 1000000))
}

# integ_counters: the server daemon's integrity counters, "name=value ...".
integ_counters() {
	"$KNOCKGW" status --json -c "$TMP/is.conf" 2>/dev/null | python3 -c '
import json, sys
s = json.load(sys.stdin)["server"]
print(" ".join("%s=%s" % (k, v) for k, v in s.items()
               if v and (k.startswith("integ") or k in ("syn_accepted", "source_cap",
                                                       "flows_full", "hold_cap", "rst_sent"))))'
}

# integ_flood_args: the flood's sources, each with its own knock for :2200.
integ_flood_args() {
	printf 'never-sent-range-020' >"$TMP/integ-flood.data"
	for i in $(seq "$INTEG_SOURCES"); do
		ts=$((70000 + i))
		isn=$("$KC" isn --mode native --key-file "$TMP/k.key" --dst "$S4" --port 2200 --tsval $ts \
			--integrity-len 20 --payload-file "$TMP/integ-flood.data")
		printf ' --source 203.0.113.%s=%s:%s' "$((100 + i))" "$isn" "$ts"
	done
}

if phase integ; then
	echo "== integ: ssh logins through knock-connect, quiet and during an integrity flood" \
		"($INTEG_SOURCES sources x $INTEG_FLOWS flows x $INTEG_SEGS segments, $FLOOD_REPS rounds)"
	integ_sshd
	ip netns exec "$NS_S" timeout 1800 python3 -c '
import socket, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 2200))
s.listen(4096)
time.sleep(1800)
' &
	PIDS="$PIDS $!"
	wait_until 10 in_s sh -c "ss -ltn | grep -q ':2200 '" || die "listener :2200 did not start"
	# The flood's sources have no sockets here: their kernel must not reset it.
	in_c nft -f - <<-EON
	table inet kgwb_integq {
		chain out {
			type filter hook output priority 0; policy accept;
			ip saddr 203.0.113.0/24 tcp flags rst drop
		}
	}
	EON
	cat >"$TMP/is.conf" <<-EOC
	queue = { num = 30; };
	rules = { table = "kgwb_integ"; };
	control_socket = "$TMP/is.conf.sock";
	keys = ( { name = "k"; file = "$TMP/k.key"; } );
	protect = ( { port = 22; mode = "native"; keys = [ "k" ]; integrity_len = 20; },
		    { port = 2200; mode = "native"; keys = [ "k" ]; integrity_len = 20; } );
	EOC
	cat >"$TMP/ic.conf" <<-EOC
	queue = { num = 31; };
	rules = { table = "kgwb_integc"; };
	control_socket = "$TMP/ic.conf.sock";
	keys = ( { name = "k"; file = "$TMP/k.key"; } );
	knock = ( { dst = "$S4"; port = 22; mode = "native"; key = "k"; integrity_len = 20; } );
	EOC
	start_kgw is "$NS_S" "$TMP/is.conf"
	start_kgw ic "$NS_C" "$TMP/ic.conf"
	fargs=$(integ_flood_args)
	integ_login >/dev/null	# the first login warms up ssh and the caches
	for round in $(seq "$FLOOD_REPS"); do
		quiet=""
		for _ in $(seq "$INTEG_LOGINS"); do
			quiet="$quiet $(integ_login)"
		done
		d0=$(queue_field 30 6)
		rm -f "$TMP/integ-flood.ready"
		# shellcheck disable=SC2086 # the sources, one option each
		in_c python3 "$TOP/tests/netns/lib/integflood.py" --iface vc --dst $S4 --dport 2200 \
			--skip 40 $fargs --flows "$INTEG_FLOWS" --segs "$INTEG_SEGS" --interval 0.5 \
			--sport-base $((20000 + round % 4 * 10000)) \
			--timeout 60 --ready "$TMP/integ-flood.ready" >"$TMP/integ-flood.out" &
		gen=$!
		wait_until 30 test -e "$TMP/integ-flood.ready" || die "the integrity flood did not start"
		sleep 1
		flood=""
		for _ in $(seq "$INTEG_LOGINS"); do
			flood="$flood $(integ_login)"
		done
		wait $gen || true
		d1=$(queue_field 30 6)
		echo "  counters: $(integ_counters)"
		q=$(echo "$quiet" | sed 's/^ //; s/ /,/g') f=$(echo "$flood" | sed 's/^ //; s/ /,/g')
		res "integ.round quiet=${q:-none} flood=${f:-none} queue_dropped=$((d1 - d0))" \
			"$(python3 -c 'import json, sys; print(" ".join("%s=%s" % kv for kv in json.load(sys.stdin).items()))' \
				<"$TMP/integ-flood.out" 2>/dev/null)"
		echo "  round $round: logins quiet${quiet:- (failed)} ms, during the flood${flood:- (failed)} ms;" \
			"queue-full drops $((d1 - d0)); flood $(cat "$TMP/integ-flood.out")"
	done
	# shellcheck disable=SC2154 # start_kgw sets PID_<name>
	stop_pid "$PID_ic"
	# shellcheck disable=SC2154
	stop_pid "$PID_is"
	in_c nft delete table inet kgwb_integq 2>/dev/null || true
fi
