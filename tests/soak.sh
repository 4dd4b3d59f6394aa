#!/bin/sh
# Soak (make soak; not part of make check): SOAK_SECONDS (default 180) of
# mixed traffic while the daemons are killed with SIGKILL and restarted
# every few seconds, then a clean stop and a summary.
#
#   kernel-path client ns $NS_C                  server ns $NS_S
#   +----------------------------+               +----------------------------+
#   | knockgw client, translate  |-- veth vc/vs--| knockgw server: protects   |
#   |   kernel: knocks S4/S6 :22 |               |   22 (native), 2222 (knock)|
#   |   (native), :2222 (knock)  |               |   2223 (knocked by nobody) |
#   | scp up/down, ssh, floods,  |               | sshd :22, :2222            |
#   | unknocked connects         |               | sink.py :2223, :8080       |
#   +----------------------------+               |   (8080 is not protected)  |
#   user-path client ns $NS_U                    |                            |
#   +----------------------------+               |                            |
#   | knockgw client, translate  |-- veth vu/vsu-| 198.51.100.2/24            |
#   |   user: the same for U4/U6 |               | 2001:db8:1::2/64           |
#   | 198.51.100.1, 2001:db8:1::1|               +----------------------------+
#   +----------------------------+
#
# Traffic: 8 MB scp uploads and downloads over knocked flows on both
# translation paths, IPv4 and IPv6, native and knock mode, one at a time per
# path; unknocked connections to the protected 2223 (must never connect)
# and to the unprotected 8080 (must); every 20 s an invalid-SYN flood
# (prober.py flood) at 2223 from both clients.  Every 5 s one daemon, in
# turn, gets SIGKILL and is started again.  VmRSS of each daemon is sampled
# every second.  At the end: every completed transfer has the right sha256,
# the RSS of the last daemon instances is no higher than that of the first
# ones (first/last/max printed), and after a clean stop no table, control
# socket, namespace or temporary directory is left.  SOAK_KEEP=DIR keeps
# the records (xfer.txt, rss.txt, ...) and the logs.
TOP=$(cd "$(dirname "$0")/.." && pwd)
. "$TOP/tests/netns/lib/lib.sh"

SOAK_SECONDS=${SOAK_SECONDS:-180}
NS_U=$PFX-3
U4=198.51.100.2
U6=2001:db8:1::2
CU4=198.51.100.1
CU6=2001:db8:1::1
KILL_EVERY=5
FLOOD_EVERY=20
XFER_BYTES=${SOAK_XFER_BYTES:-8000000}

make_topology
ip netns add "$NS_U"
ip link add vu netns "$NS_U" type veth peer name vsu netns "$NS_S"
ip -n "$NS_U" addr add $CU4/24 dev vu
ip -n "$NS_S" addr add $U4/24 dev vsu
ip -n "$NS_U" addr add $CU6/64 dev vu nodad
ip -n "$NS_S" addr add $U6/64 dev vsu nodad
ip -n "$NS_U" link set lo up
ip netns exec "$NS_U" ethtool -K vu rx off tx off >/dev/null
in_s ethtool -K vsu rx off tx off >/dev/null
ip -n "$NS_U" link set vu up
ip -n "$NS_S" link set vsu up
in_u() { ip netns exec "$NS_U" "$@"; }
wait_for 5 in_u ping -c1 -W1 $U4
wait_for 5 in_u ping -6 -c1 -W1 $U6

start_sshd
start_sshd2
for port in 2223 8080; do
	in_s python3 "$TOP/tests/netns/lib/sink.py" $port /dev/null 2>"$TMP/sink$port.err" &
	PIDS="$PIDS $!"
done
for port in 2222 2223 8080; do
	listening $port
done

K=$(key_file k)
two_port_server_conf "$TMP/server.conf" '{ port = 2223; mode = "native"; keys = [ "k" ]; }'
two_port_client_conf "$TMP/ck.conf" kernel "$TMP/client-kernel.sock" $S4 $S6
two_port_client_conf "$TMP/cu.conf" user "$TMP/client-user.sock" $U4 $U6

# start ROLE: (re)starts a daemon; ROLE srv, ck (kernel path), cu (user path).
start() {
	case $1 in
	srv) start_knockgw "$NS_S" "$TMP/server.conf" && SRV=$KGW_PID ;;
	ck) start_knockgw "$NS_C" "$TMP/ck.conf" && CK=$KGW_PID ;;
	cu) start_knockgw "$NS_U" "$TMP/cu.conf" && CU=$KGW_PID ;;
	esac
}
pid_of() { eval "echo \$$(echo "$1" | tr a-z A-Z)"; }
start srv
start ck
start cu

head -c "$XFER_BYTES" /dev/urandom >"$TMP/src.bin"
WANT=$(sha256sum <"$TMP/src.bin" | cut -d' ' -f1)
OPTS="$SSH_OPTS -o ConnectTimeout=20 -o ServerAliveInterval=5 -o ServerAliveCountMax=6"
START=$(date +%s)
DEADLINE=$((START + SOAK_SECONDS))

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
# xfer_loop NAME NSEXEC V4 V6: transfers until the deadline, one at a time,
# cycling through up/down x IPv4/IPv6 x port 22/2222.  One result line per
# transfer: NAME DIR DST PORT RC sha-ok|sha-bad|failed SECONDS START, and
# one per knocked ssh command: NAME ssh DST PORT - ok|failed SECONDS START.
xfer_loop() {
	x_name=$1 x_ns=$2 x_v4=$3 x_v6=$4
	n=0
	while [ "$(date +%s)" -lt "$DEADLINE" ]; do
		n=$((n + 1))
		case $((n % 4)) in
		0|1) dst=$x_v4 host=$x_v4 ;;
		*) dst=$x_v6 host="[$x_v6]" ;;
		esac
		if [ $((n % 8)) -lt 4 ]; then port=22; else port=2222; fi
		f=$TMP/$x_name-$n.bin
		t0=$(now)
		if [ $((n % 2)) = 0 ]; then
			dir=up
			ip netns exec "$x_ns" timeout 150 scp -q -P $port $OPTS "$TMP/src.bin" \
				"root@$host:$f" >>"$TMP/$x_name.scp.log" 2>&1
			rc=$?
		else
			dir=down
			ip netns exec "$x_ns" timeout 150 scp -q -P $port $OPTS "root@$host:$TMP/src.bin" \
				"$f" >>"$TMP/$x_name.scp.log" 2>&1
			rc=$?
		fi
		if [ $rc != 0 ]; then
			res=failed
		elif [ "$(sha256sum <"$f" | cut -d' ' -f1)" = "$WANT" ]; then
			res=sha-ok
		else
			res=sha-bad
			cp "$f" "$TMP/../kgw-soak-bad-$x_name-$n.bin" 2>/dev/null
		fi
		rm -f "$f"
		echo "$x_name $dir $dst $port $rc $res $(since "$t0") $t0" >>"$TMP/xfer.txt"
		# A short knocked command between transfers.
		t0=$(now)
		out=$(ip netns exec "$x_ns" timeout 60 ssh -p $port $OPTS "root@$dst" echo knocked \
			2>>"$TMP/$x_name.ssh.log")
		echo "$x_name ssh $dst $port - $([ "$out" = knocked ] && echo ok || echo failed)" \
			"$(since "$t0") $t0" >>"$TMP/xfer.txt"
	done
}

# Unknocked connections: to 2223 (protected, no client knocks it; sink.py
# listens, so a connection that got through would show) and to 8080.
unknocked_loop() {
	while [ "$(date +%s)" -lt "$DEADLINE" ]; do
		in_c python3 - "$S4" >>"$TMP/unknocked.txt" 2>/dev/null <<-'EOPY'
		import socket, sys
		for port in (2223, 8080):
		    s = socket.socket()
		    s.settimeout(2)
		    try:
		        s.connect((sys.argv[1], port))
		        print(port, "connected")
		    except OSError as e:
		        print(port, "refused" if isinstance(e, ConnectionRefusedError) else "timeout")
		    finally:
		        s.close()
		EOPY
		sleep 0.5
	done
}

flood_loop() {
	while [ $(($(date +%s) + FLOOD_EVERY)) -lt "$DEADLINE" ]; do
		sleep $FLOOD_EVERY
		in_c $PROBER flood --iface vc --src $C4 --dst $S4 --dport 2223 --count 20000 \
			--seconds 2 --seed "$(date +%s)" >>"$TMP/flood.txt" 2>/dev/null
		in_u $PROBER flood --iface vu --src $CU4 --dst $U4 --dport 2223 --count 20000 \
			--seconds 2 --seed "$(date +%s)" >>"$TMP/flood.txt" 2>/dev/null
	done
}

: >"$TMP/xfer.txt"
: >"$TMP/unknocked.txt"
: >"$TMP/flood.txt"
: >"$TMP/rss.txt"
: >"$TMP/eol.txt"
: >"$TMP/events.txt"
xfer_loop ck "$NS_C" $S4 $S6 &
W1=$!
xfer_loop cu "$NS_U" $U4 $U6 &
W2=$!
unknocked_loop &
W3=$!
flood_loop &
W4=$!
PIDS="$PIDS $W1 $W2 $W3 $W4"

rss_of() { awk '$1 == "VmRSS:" { print $2 }' "/proc/$1/status" 2>/dev/null; }
# The main loop samples VmRSS every second and kills one daemon in turn
# every KILL_EVERY seconds; bounded by the deadline.
RESTARTS=0
START_FAILS=0
turn=0
tick=0
while [ "$(date +%s)" -lt "$DEADLINE" ]; do
	sleep 1
	tick=$((tick + 1))
	for role in srv ck cu; do
		p=$(pid_of $role)
		r=$(rss_of "$p")
		[ -n "$r" ] && echo "$role $p $(($(date +%s) - START)) $r" >>"$TMP/rss.txt"
	done
	[ $((tick % KILL_EVERY)) = 0 ] || continue
	case $((turn % 3)) in 0) role=srv ;; 1) role=ck ;; *) role=cu ;; esac
	turn=$((turn + 1))
	p=$(pid_of $role)
	echo "$role $p $(rss_of "$p")" >>"$TMP/eol.txt"	# end-of-life RSS
	echo "$(now) kill $role" >>"$TMP/events.txt"
	kill -9 "$p"
	wait_for 5 sh -c "! kill -0 $p"
	if start $role; then RESTARTS=$((RESTARTS + 1)); else START_FAILS=$((START_FAILS + 1)); fi
	echo "$(now) ready $role" >>"$TMP/events.txt"
done
# Transfers under way finish (each is bounded by its timeout).
wait "$W1" "$W2" "$W3" "$W4" 2>/dev/null
for role in srv ck cu; do
	p=$(pid_of $role)
	echo "$role $p $(rss_of "$p")" >>"$TMP/eol.txt"
done
ELAPSED=$(($(date +%s) - START))

# ---------------------------------------------------------------- checks
count() { grep -c "$1" "$2" || true; }
for path in ck cu; do
	ok=$(grep -c "^$path \(up\|down\) .* sha-ok " "$TMP/xfer.txt" || true)
	check "$path: transfers completed ($ok)" [ "$ok" -ge 1 ]
	for dir in up down; do
		n=$(grep -c "^$path $dir .* sha-ok " "$TMP/xfer.txt" || true)
		check "$path: at least one completed $dir transfer" [ "$n" -ge 1 ]
	done
done
BAD=$(count ' sha-bad ' "$TMP/xfer.txt")
check "every completed transfer has the right sha256 ($BAD wrong)" [ "$BAD" = 0 ]
VIOL=$(count '^2223 connected' "$TMP/unknocked.txt")
check "no unknocked connection reached the protected port ($VIOL did)" [ "$VIOL" = 0 ]
UNPROT=$(count '^8080 connected' "$TMP/unknocked.txt")
check "unknocked connections to the unprotected port worked ($UNPROT)" [ "$UNPROT" -ge 1 ]
# What the client role rewrote (SYNs, and everything on the user path) and
# what came back must have had right TCP checksums, as each kernel saw them.
CSUM="server $(csum_errors "$NS_S"), kernel-path client $(csum_errors "$NS_C"), user-path client $(csum_errors "$NS_U")"
check "no TCP checksum errors in any namespace ($CSUM)" \
	[ "$(csum_errors "$NS_S")$(csum_errors "$NS_C")$(csum_errors "$NS_U")" = 000 ]
check "every restart became ready ($RESTARTS restarts, $START_FAILS failed)" [ "$START_FAILS" = 0 ]
# One kill every KILL_EVERY s, each start taking up to a second or two:
# at least half as many restarts as there were slots (6 is each daemon twice).
need=$((SOAK_SECONDS / KILL_EVERY / 2))
[ "$need" -gt 6 ] && need=6
[ "$need" -lt 1 ] && need=1
check "the daemons were killed and restarted ($RESTARTS, at least $need)" [ "$RESTARTS" -ge "$need" ]

# RSS: the end-of-life samples of the last third of each daemon's instances
# against the first third's (same load, same life time).
rss_line() { # ROLE -> "first last max flat(0|1)"
	awk -v r="$1" '$1 == r && $3 != "" { v[n++] = $3 }
		END {
			if (n == 0) { print "- - - 0"; exit }
			k = int(n / 3); if (k < 1) k = 1
			for (i = 0; i < n; i++) if (v[i] > max) max = v[i]
			for (i = 0; i < k; i++) { if (v[i] > a) a = v[i]; if (v[n - 1 - i] > b) b = v[n - 1 - i] }
			print v[0], v[n - 1], max, (b <= a * 1.2 + 2048) ? 1 : 0
		}' "$TMP/eol.txt"
}
for role in srv ck cu; do
	set -- $(rss_line $role)
	eval "RSS_$role='first $1 kB, last $2 kB, max $3 kB'"
	check "$role: RSS flat over its instances (first $1 kB, last $2 kB, max $3 kB)" [ "$4" = 1 ]
done
peak=$(awk '{ if ($4 > m) m = $4 } END { print m + 0 }' "$TMP/rss.txt")

# The last instances' counters, then a clean stop of everything.
in_s "$KNOCKGW" status -c "$TMP/server.conf" >"$TMP/status-srv.txt" 2>&1 || true
for role in srv ck cu; do
	p=$(pid_of $role)
	kill "$p"
	if wait "$p"; then rc=0; else rc=$?; fi
	check "$role: the last instance stops cleanly on SIGTERM" [ $rc = 0 ]
done
# on_stop "hide", the default: each daemon's table stays and keeps the
# ports hidden (and the client's flows' state) until the next start.
for ns in "$NS_S" "$NS_C" "$NS_U"; do
	check "$ns: the table stays after the stop (on_stop hide)" \
		sh -c "ip netns exec $ns nft list table inet knockgw >/dev/null 2>&1"
done
check "no control socket left" sh -c "! ls $TMP/*.sock >/dev/null 2>&1"
check "no queue bound in any namespace" sh -c "
	for ns in $NS_S $NS_C $NS_U; do
		[ -z \"\$(ip netns exec \$ns cat /proc/net/netfilter/nfnetlink_queue 2>/dev/null)\" ] || exit 1
	done"

FLOODED=$(awk -F'"sent": ' 'NF > 1 { s += $2 + 0 } END { print s + 0 }' "$TMP/flood.txt")
XFERS=$(grep -c ' sha-ok ' "$TMP/xfer.txt" || true)
FAILED=$(grep -c ' failed ' "$TMP/xfer.txt" || true)
PER=""
for p in ck cu; do
	for d in up down; do
		PER="$PER$p $d $(grep -c "^$p $d .* sha-ok " "$TMP/xfer.txt" || true); "
	done
done
SSH_OK=$(grep -c ' ssh .* ok ' "$TMP/xfer.txt" || true)
SECS=$(awk '$6 == "sha-ok" { s += $7; n++ } END { if (n) printf "%.1f", s / n; else print "-" }' \
	"$TMP/xfer.txt")

# SOAK_KEEP=DIR keeps the records and logs for a look afterwards.
if [ -n "${SOAK_KEEP:-}" ]; then
	mkdir -p "$SOAK_KEEP"
	cp "$TMP"/*.txt "$TMP"/*.log "$SOAK_KEEP"/ 2>/dev/null
fi
# Everything made here goes now; then nothing may be left.
SUMMARY_PFX=$PFX
SUMMARY_TMP=$TMP
cleanup
trap - EXIT
check "no namespace left" sh -c "! ip netns list | grep -q '^$SUMMARY_PFX-'"
check "no temporary directory left" [ ! -e "$SUMMARY_TMP" ]

cat <<EOS
# ---------------------------------------------------------------- soak summary
# ran ${ELAPSED} s (SOAK_SECONDS=$SOAK_SECONDS); ${RESTARTS} SIGKILL restarts (every ${KILL_EVERY} s, in turn)
# transfers: $XFERS completed with the right sha256 (${XFER_BYTES} bytes each, ${SECS} s on
#   average), $BAD with a wrong one, $FAILED failed (scp or ssh exit != 0)
#   by path (ck kernel, cu user) and direction: $PER
# knocked ssh commands: $SSH_OK ok; TCP checksum errors: $CSUM
# unknocked: $VIOL reached the protected port, $UNPROT reached the unprotected one
# invalid SYNs flooded: $FLOODED
# VmRSS (kB, end of each instance's life): server $RSS_srv
#   client kernel path $RSS_ck; client user path $RSS_cu; peak sample $peak kB
EOS
finish
