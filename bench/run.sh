#!/bin/sh
# bench/run.sh - `make bench`: knockgw's performance figures, measured in
# network namespaces of this machine.  Not part of `make check`; nothing here
# is a pass/fail test.
#
#   client ns kgwb-<pid>-1                   server ns kgwb-<pid>-2
#   vc 192.0.2.1/24 -------- veth ---------- vs 192.0.2.2/24
#   203.0.113.0/24 local (spoofed flood      route 203.0.113.0/24 via vc
#   sources get their answers delivered)     listeners :8001 :8002, nothing
#   synflood, synprobe, client-role knockgw  on :7001-7005 (closed), knockgw
#   The tput phase adds four more such pairs (kgwb-<pid>-3 .. -10), one per
#   configuration, with iperf3 servers on :5201 and :5202.
#
# Phases (BENCH_PHASES, default all): synrate flood latency tput gw connrate integ.
#   synrate  drain rate of a backlog queued while the reader was stopped:
#            knockgw (count 1 and 2), nfq_min, and their drop variants
#   flood    200 knocks while the daemon is flooded at its saturation rate
#   latency  raw SYN -> answer times (knocked vs unprotected, bad knock vs
#            closed port), and connect() through both roles
#   tput     iperf3 with and without the roles
#   gw       iperf3 through a router: gateway client role (from), gateway
#            server role (forward), each against the same route without
#            knockgw (bench/gw.sh, 3-namespace topologies drawn there)
#   connrate new connections per second through the client role (kernel
#            path) against plain connects (bench/gw.sh, bench/connrate.c)
#   integ    ssh logins through knock-connect (integrity mode) during a key
#            holder's flood of integrity flows that never complete, against
#            quiet ones (bench/integ.sh)
# Knobs: BUILD (default build), BENCH_REPS (7), BENCH_FLOOD_REPS (3),
# BENCH_TPUT_REPS (8, also gw's rounds), BENCH_TPUT_SECONDS (3),
# BENCH_CONN_REPS (as BENCH_TPUT_REPS), BENCH_CONN_COUNT (30000),
# BENCH_CONN_INFLIGHT (64), BENCH_CONN_SECONDS (3), BENCH_PERF=1 (extra,
# unmeasured drains of knockgw, an iperf3 run of the user path and a
# connrate run of the client role under `perf record`; the profiles are
# left in $BUILD/bench/perf-*.txt).
# The figures end the output as "BENCH <name> <value>" lines; bench/README.md
# describes how each is measured.
#
# Only documentation addresses; the root namespace's firewall is never
# touched (every nft command runs in a bench namespace); everything is
# removed on exit; every generator is bounded by count and time.
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP"
BUILD=$(cd "${BUILD:-build}" && pwd)
KNOCKGW=$BUILD/knockgw
KC=$BUILD/knock-connect
BB=$BUILD/bench
REPS=${BENCH_REPS:-7}
FLOOD_REPS=${BENCH_FLOOD_REPS:-3}
TPUT_REPS=${BENCH_TPUT_REPS:-8}
TPUT_SECONDS=${BENCH_TPUT_SECONDS:-3}
PHASES=${BENCH_PHASES:-"synrate flood latency tput gw connrate integ"}
PERF=${BENCH_PERF:-0}

C4=192.0.2.1
S4=192.0.2.2
SPOOF=203.0.113.1	# flood sources: SPOOF .. +253
NSPOOF=253
FLOOD_N=100000		# SYNs per drain measurement (fills every queue's socket)
BIGQ=1048576		# queue.maxlen for the drain measurements

die() {
	echo "bench: $*" >&2
	exit 1
}

[ "$(id -u)" = 0 ] || die "needs root (network namespaces)"
[ -x "$KNOCKGW" ] && [ -x "$KC" ] || die "build first: make (missing $KNOCKGW)"
for t in iperf3 python3 nft ip; do
	command -v $t >/dev/null || die "$t is not installed (make deps)"
done

# --- helpers, compiled with the project's flags (the Makefile passes them) ---
PKG_B="libnetfilter_queue libmnl"
CC=${CC:-cc}
CFLAGS_B=${BENCH_CFLAGS:-"-std=gnu11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wstrict-prototypes \
-Wmissing-prototypes -Wshadow -Wcast-qual -Wsign-compare -Wformat=2 -Wvla -fPIE \
-fstack-protector-strong -fstack-clash-protection -D_FORTIFY_SOURCE=2 $(pkg-config --cflags $PKG_B) -O2 -g"}
LDFLAGS_B=${BENCH_LDFLAGS:-"-pie -Wl,-z,relro -Wl,-z,now -Wl,-z,noexecstack"}
LIBS_B=${BENCH_LIBS:-$(pkg-config --libs $PKG_B)}
mkdir -p "$BB"
for h in nfq_min synflood drainmon synprobe connrate; do
	if [ ! -x "$BB/$h" ] || [ "bench/$h.c" -nt "$BB/$h" ]; then
		echo "  CC      bench/$h.c"
		# shellcheck disable=SC2086
		$CC $CFLAGS_B $LDFLAGS_B -o "$BB/$h" "bench/$h.c" $LIBS_B
	fi
done

# --- namespaces, processes, cleanup ---
PFX=kgwb-$$
NS_C=$PFX-1
NS_S=$PFX-2
TMP=$(mktemp -d /tmp/kgwb-XXXXXX)
chmod 755 "$TMP"
PIDS=""
RES=$TMP/results

# alive, stop_pids, del_namespaces
. "$TOP/tests/netns/base.sh"

cleanup() {
	set +e
	# shellcheck disable=SC2086
	stop_pids $PIDS
	del_namespaces "$PFX"
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

in_c() { ip netns exec "$NS_C" "$@"; }
in_s() { ip netns exec "$NS_S" "$@"; }

# wait_until SECONDS COMMAND...: polls every 0.05 s, bounded.
wait_until() {
	wu_left=$(($1 * 20))
	shift
	while [ "$wu_left" -gt 0 ]; do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.05
		wu_left=$((wu_left - 1))
	done
	return 1
}

forget_pid() {
	np=""
	for p in $PIDS; do
		[ "$p" = "$1" ] || np="$np $p"
	done
	PIDS=$np
}

# stop_pid PID [SIGNAL]: ends one of our processes, bounded, and reaps it.
stop_pid() {
	kill -CONT "$1" 2>/dev/null || true
	kill "-${2:-TERM}" "$1" 2>/dev/null || true
	for _ in $(seq 50); do
		alive "$1" || break
		sleep 0.1
	done
	kill -9 "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
	forget_pid "$1"
}

lines() { grep -c "$1" "$2" 2>/dev/null || true; }

# start_kgw NAME NS CONF: a knockgw in the foreground; sets PID_<NAME>.
start_kgw() {
	log=$TMP/$1.log
	: >"$log"
	ip netns exec "$2" "$KNOCKGW" -f -c "$3" >>"$log" 2>&1 &
	eval "PID_$1=$!"
	PIDS="$PIDS $!"
	if ! wait_until 10 grep -q '^ready:' "$log"; then
		cat "$log" >&2
		die "knockgw $1 did not become ready"
	fi
}

# start_nfqmin NAME QUEUE COPY_RANGE [-d]: the reference reader; sets PID_<NAME>.
start_nfqmin() {
	log=$TMP/$1.log
	: >"$log"
	ip netns exec "$NS_S" "$BB/nfq_min" -n "$2" -r "$3" -m $BIGQ -s 900 ${4:-} >>"$log" 2>&1 &
	eval "PID_$1=$!"
	PIDS="$PIDS $!"
	wait_until 10 grep -q '^ready:' "$log" || { cat "$log" >&2; die "nfq_min $1 did not start"; }
}

# verdicts NAME PID: the reader's verdict counter (knockgw and nfq_min both
# log "counters: ... verdicts=N ..." on SIGUSR1).
verdicts() {
	log=$TMP/$1.log
	before=$(lines '^counters:' "$log")
	kill -USR1 "$2"
	wait_until 5 sh -c "[ \$(grep -c '^counters:' '$log') -gt $before ]" ||
		die "$1 did not log its counters"
	grep '^counters:' "$log" | tail -1 | sed 's/.* verdicts=\([0-9]*\).*/\1/'
}

# queue_field QUEUE COLUMN: a column of /proc/net/netfilter/nfnetlink_queue
# in the server namespace (3 queue_total, 5 copy_range, 6 queue_dropped).
queue_field() {
	in_s awk -v q="$1" -v c="$2" '$1 == q { print $c }' /proc/net/netfilter/nfnetlink_queue
}

queue_bound() { [ -n "$(queue_field "$1" 1)" ]; }

# server_conf FILE TABLE QNUM QCOUNT MAXLEN ON_FAIL PORT...
server_conf() {
	f=$1 table=$2 qnum=$3 qcount=$4 maxlen=$5 onfail=$6
	shift 6
	ents=""
	for p in "$@"; do
		ents="$ents${ents:+,
	}{ port = $p; mode = \"native\"; keys = [ \"k\" ]; on_fail = \"$onfail\"; }"
	done
	cat >"$f" <<-EOC
	queue = { num = $qnum; count = $qcount; maxlen = $maxlen; };
	rules = { table = "$table"; };
	control_socket = "$f.sock";
	keys = ( { name = "k"; file = "$TMP/k.key"; } );
	protect = ( $ents );
	EOC
}

# client_conf FILE TRANSLATE PORT...
client_conf() {
	f=$1 tr=$2
	shift 2
	ents=""
	for p in "$@"; do
		ents="$ents${ents:+,
	}{ dst = \"$S4\"; port = $p; mode = \"native\"; key = \"k\"; }"
	done
	cat >"$f" <<-EOC
	translate = "$tr";
	queue = { num = 20; };
	rules = { table = "kgwb_client"; };
	control_socket = "$f.sock";
	keys = ( { name = "k"; file = "$TMP/k.key"; } );
	knock = ( $ents );
	EOC
}

# knock_isn PORT TSVAL: the native knock ISN for S4:PORT (knock-connect isn).
knock_isn() {
	"$KC" isn --mode native --key-file "$TMP/k.key" --dst $S4 --port "$1" --tsval "$2"
}

rand32() { od -An -N4 -tu4 /dev/urandom | tr -d ' '; }

res() { echo "$*" >>"$RES"; }

# perf_start NAME PID / perf_stop NAME: with BENCH_PERF=1, a call-graph
# profile of one process; the report goes to $BB/perf-NAME.txt.
PERF_PID=""
perf_start() {
	[ "$PERF" = 1 ] && command -v perf >/dev/null || return 0
	perf record -F 10000 -g -p "$2" -o "$TMP/perf-$1.data" >/dev/null 2>&1 &
	PERF_PID=$!
	PIDS="$PIDS $PERF_PID"
	sleep 1
}
perf_stop() {
	[ -n "$PERF_PID" ] || return 0
	stop_pid "$PERF_PID" INT
	PERF_PID=""
	perf report -i "$TMP/perf-$1.data" --no-children --sort dso,sym --stdio -g none \
		--percent-limit 0.5 2>/dev/null | grep -v '^#' | grep -v '^$' >"$BB/perf-$1.txt" || true
	echo "  perf profile of $1 (top 12; all in $BB/perf-$1.txt):"
	head -12 "$BB/perf-$1.txt" | sed 's/^/    /'
}

# get KEY: the value of KEY=value in the line(s) on stdin.
get() { tr ' ' '\n' | sed -n "s/^$1=\([0-9.,]*\).*/\1/p" | head -1; }

# --- topology ---
# make_pair CLIENT_NS SERVER_NS: two namespaces joined by a veth pair (vc
# C4 / vs S4), offloads left at their defaults as on a real host.
make_pair() {
	ip netns add "$1"
	ip netns add "$2"
	ip link add vc netns "$1" type veth peer name vs netns "$2"
	ip -n "$1" addr add $C4/24 dev vc
	ip -n "$2" addr add $S4/24 dev vs
	for ns in "$1" "$2"; do
		ip -n "$ns" link set lo up
	done
	ip -n "$1" link set vc up
	ip -n "$2" link set vs up
	wait_until 5 ip netns exec "$1" ping -c1 -W1 $S4 || die "veth pair $1/$2 does not come up"
}

echo "knockgw benchmark: $(nproc) CPUs, Linux $(uname -r), load average $(cut -d' ' -f1-3 /proc/loadavg)"
make_pair "$NS_C" "$NS_S"
in_c ip route add local 203.0.113.0/24 dev lo
in_s ip route add 203.0.113.0/24 via $C4
"$KNOCKGW" genkey >"$TMP/k.key"
chmod 600 "$TMP/k.key"
: >"$RES"
res "meta.load_start $(cut -d' ' -f1 /proc/loadavg)"

# Listeners: 8001 (protected) and 8002 (never protected) for the latency
# probes.
ip netns exec "$NS_S" timeout 1800 python3 -c '
import socket, sys, time
ss = []
for p in (8001, 8002):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", p))
    s.listen(4096)
    ss.append(s)
time.sleep(1800)
' &
PIDS="$PIDS $!"
wait_until 10 in_s sh -c "ss -ltn | grep -q ':8002 '" || die "listeners did not start"

phase() { case " $PHASES " in *" $1 "*) return 0 ;; esac; return 1; }

# --- synrate ---------------------------------------------------------------
# drain LABEL NAME PID QNUM QCOUNT PORT: stop the reader, queue a backlog of
# invalid SYNs (FLOOD_N sent from NSPOOF addresses; what fits in the queue's
# socket stays queued, the rest the kernel drops), then time the drain.
drain() {
	v0=$(verdicts "$2" "$3")
	kill -STOP "$3"
	in_c "$BB/synflood" --dst $S4 --dport "$6" --src $SPOOF --nsrc $NSPOOF --count $FLOOD_N \
		--seconds 10 --seed "$(rand32)" >"$TMP/flood.out"
	sleep 0.3
	out=$(in_s "$BB/drainmon" -p "$3" -q "$4" -c "$5" -t 20) || true
	kill -CONT "$3"
	v1=$(verdicts "$2" "$3")
	backlog=$(echo "$out" | get backlog)
	us=$(echo "$out" | get usecs)
	[ "$(echo "$out" | get timeout)" = 0 ] || echo "bench: $1: drain timed out ($out)" >&2
	decided=$((v1 - v0))
	rate=$(python3 -c "print(round($decided / max(float('${us:-0}'), 1) * 1e6))")
	res "drain.$1 rate=$rate decided=$decided backlog=$backlog usecs=$us" \
		"per_queue=$(echo "$out" | get per_queue) gen=$(get rate <"$TMP/flood.out")"
	printf '  %-12s backlog %6s  decided %6s  in %7s us  = %7s SYN/s\n' "$1" "$backlog" \
		"$decided" "$us" "$rate"
}

if phase synrate; then
	echo "== synrate: drain rate of a stopped reader's backlog ($REPS rounds)"
	server_conf "$TMP/d1.conf" kgwb_d1 0 1 $BIGQ reset 7001
	server_conf "$TMP/d2.conf" kgwb_d2 2 2 $BIGQ reset 7003
	server_conf "$TMP/d3.conf" kgwb_d3 4 1 $BIGQ drop 7004
	server_conf "$TMP/r1.conf" kgwb_r1 1 1 $BIGQ reset 7002
	server_conf "$TMP/r3.conf" kgwb_r3 5 1 $BIGQ drop 7005
	start_kgw d1 "$NS_S" "$TMP/d1.conf"
	start_kgw d2 "$NS_S" "$TMP/d2.conf"
	start_kgw d3 "$NS_S" "$TMP/d3.conf"
	RANGE=$(queue_field 0 5)
	res "meta.copy_range $RANGE"
	# The references get the daemon's own ruleset: a knockgw installs its
	# table and is killed (-9 leaves the table), nfq_min binds its queue.
	for r in r1:1:7002 r3:5:7005; do
		name=${r%%:*} q=$(echo "$r" | cut -d: -f2)
		start_kgw "${name}kgw" "$NS_S" "$TMP/$name.conf"
		eval "stop_pid \$PID_${name}kgw 9"
		wait_until 5 sh -c "! ip netns exec $NS_S grep -q '^ *$q ' /proc/net/netfilter/nfnetlink_queue" ||
			die "queue $q still bound"
	done
	start_nfqmin r1 1 "$RANGE"
	start_nfqmin r3 5 "$RANGE" -d
	for round in $(seq "$REPS"); do
		echo " round $round"
		# Every other round in reverse order, so that neither side of a
		# ratio always runs first.
		if [ $((round % 2)) = 1 ]; then
			drain daemon d1 "$PID_d1" 0 1 7001
			drain nfqmin r1 "$PID_r1" 1 1 7002
			drain daemon_2q d2 "$PID_d2" 2 2 7003
			drain daemon_drop d3 "$PID_d3" 4 1 7004
			drain nfqmin_drop r3 "$PID_r3" 5 1 7005
		else
			drain nfqmin_drop r3 "$PID_r3" 5 1 7005
			drain daemon_drop d3 "$PID_d3" 4 1 7004
			drain daemon_2q d2 "$PID_d2" 2 2 7003
			drain nfqmin r1 "$PID_r1" 1 1 7002
			drain daemon d1 "$PID_d1" 0 1 7001
		fi
	done
	if [ "$PERF" = 1 ]; then
		for t in d1:0:7001 d3:4:7004; do
			n=${t%%:*} q=$(echo "$t" | cut -d: -f2) port=${t##*:}
			eval "pid=\$PID_$n"
			perf_start "drain_$n" "$pid"
			for _ in 1 2 3; do
				drain "perf_$n" "$n" "$pid" "$q" 1 "$port"
			done
			perf_stop "drain_$n"
		done
	fi
	for n in d1 d2 d3 r1 r3; do
		eval "stop_pid \$PID_$n"
	done
	in_s nft delete table inet kgwb_r1 2>/dev/null || true
	in_s nft delete table inet kgwb_r3 2>/dev/null || true
fi

# The server daemon for the other phases: default queue settings.
server_conf "$TMP/s.conf" kgwb_s 10 1 4096 reset 5201 7001 8001
{ cat "$TMP/s.conf"; echo 'closed_ports = "daemon";'; } >"$TMP/sd.conf"
sed -i "s|$TMP/s.conf.sock|$TMP/sd.conf.sock|" "$TMP/sd.conf"
client_conf "$TMP/ck.conf" kernel 8001

# --- flood -----------------------------------------------------------------
if phase flood; then
	echo "== flood: 200 knocks while the server is flooded at its saturation rate ($FLOOD_REPS rounds)"
	start_kgw s "$NS_S" "$TMP/s.conf"
	# Saturation: flood as fast as the generator goes, count what the daemon decides.
	in_c "$BB/synflood" --dst $S4 --dport 8001 --src $SPOOF --nsrc $NSPOOF --count 2000000 \
		--seconds 4 >"$TMP/calib.out" &
	gen=$!
	sleep 1
	w=$(in_s "$BB/drainmon" -w 2 -q 10)
	wait $gen || true
	SAT=$(echo "$w" | get rate)
	[ "${SAT:-0}" -gt 1000 ] || die "no saturation rate measured ($w)"
	res "flood.saturation rate=$SAT queue_dropped=$(echo "$w" | get queue_dropped) gen=$(get rate <"$TMP/calib.out")"
	echo "  saturation: the daemon decided $SAT SYN/s under an unpaced flood of $(get rate <"$TMP/calib.out")/s" \
		"(queue full drops: $(echo "$w" | get queue_dropped) in 2 s)"
	for round in $(seq "$FLOOD_REPS"); do
		: >"$TMP/knocks"
		for i in $(seq 200); do
			ts=$((round * 1000000 + i * 7919))
			echo "knock 8001 0x$(knock_isn 8001 $ts) $ts" >>"$TMP/knocks"
		done
		in_c "$BB/synflood" --dst $S4 --dport 8001 --src $SPOOF --nsrc $NSPOOF --rate "$SAT" \
			--count $((SAT * 8)) --seconds 7 --seed "$(rand32)" >"$TMP/paced.out" &
		gen=$!
		sleep 0.5
		in_s "$BB/drainmon" -w 5 -q 10 >"$TMP/watch.out" &
		mon=$!
		in_c "$BB/synprobe" batch --src $C4 --dst $S4 --list "$TMP/knocks" --sport-base 20000 \
			--gap-us 10000 --retry-ms 1000 --timeout-ms 3000 >"$TMP/batch-$round.out"
		wait $mon || true
		wait $gen || true
		sum=$(tail -1 "$TMP/batch-$round.out")
		ok=$(echo "$sum" | get synack)
		first=$(echo "$sum" | get synack_first_try)
		res "flood.round ok=$ok first=$first probes=$(echo "$sum" | get probes)" \
			"rate=$(get rate <"$TMP/watch.out") queue_dropped=$(get queue_dropped <"$TMP/watch.out")" \
			"gen=$(get rate <"$TMP/paced.out")"
		echo "  round $round: $ok/200 SYN-ACK ($first at the first SYN); flood $(get rate <"$TMP/paced.out")/s," \
			"daemon decided $(get rate <"$TMP/watch.out")/s, queue-full drops $(get queue_dropped <"$TMP/watch.out")"
	done
	stop_pid "$PID_s"
fi

# --- latency ---------------------------------------------------------------
if phase latency; then
	echo "== latency: SYN -> answer on the wire, $REPS rounds of 4 x 100 probes, $REPS rounds of 2 x 100"
	echo "   with closed_ports = \"daemon\", then 2 x 300 connect()s"
	# rtt_rounds OUT KIND...: REPS rounds of 100 interleaved probes of each
	# kind (knock, plain, bad, closed), answer times into $TMP/OUT-ROUND.out.
	rtt_rounds() {
		r_out=$1
		shift
		for round in $(seq "$REPS"); do
			: >"$TMP/probes"
			for i in $(seq 100); do
				ts=$((round * 1000000 + i * 104729))
				for kind in "$@"; do
					case $kind in
					knock) echo "knock 8001 0x$(knock_isn 8001 $ts) $ts" ;;
					plain) echo "plain 8002 $(rand32) $ts" ;;
					bad) echo "bad 8001 $(rand32) $ts" ;;
					closed) echo "closed 7002 $(rand32) $ts" ;;
					esac
				done >>"$TMP/probes"
			done
			in_c "$BB/synprobe" rtt --src $C4 --dst $S4 --list "$TMP/probes" \
				--sport-base 30000 --gap-us 300 --timeout-ms 1000 >"$TMP/$r_out-$round.out"
		done
	}
	start_kgw s "$NS_S" "$TMP/s.conf"
	rtt_rounds rtt knock plain bad closed
	# The same bad knock / closed port pair with closed_ports = "daemon":
	# closed ports answered by the daemon through the refused knock's path.
	stop_pid "$PID_s"
	start_kgw s "$NS_S" "$TMP/sd.conf"
	rtt_rounds rttd bad closed
	stop_pid "$PID_s"
	start_kgw s "$NS_S" "$TMP/s.conf"
	# connect() as an application sees it: knocked through both roles vs plain.
	start_kgw ck "$NS_C" "$TMP/ck.conf"
	: >"$TMP/conns"
	for i in $(seq 300); do
		echo "knocked 8001 0 0" >>"$TMP/conns"
		echo "plain 8002 0 0" >>"$TMP/conns"
	done
	in_c "$BB/synprobe" connect --src $C4 --dst $S4 --list "$TMP/conns" --gap-us 300 \
		--timeout-ms 3000 >"$TMP/connect.out"
	stop_pid "$PID_ck"
	stop_pid "$PID_s"
	echo "  done"
fi

# --- throughput ------------------------------------------------------------
# Four namespace pairs, each set up once, so that the runs being compared
# follow each other within seconds without daemon restarts in between (other
# work on the machine comes and goes; what runs back to back sees the same):
#   N  no knockgw at all                        iperf3 -> 5202
#   K  client role, translate kernel             iperf3 -> 5202 (knocked)
#   S  client role kernel + server role          iperf3 -> 5201 (knocked, protected)
#                                                       -> 5202 (knocked, unprotected)
#   U  client role, translate user               iperf3 -> 5202 (knocked)
# iperf3 TAG PORT: bits/s received, client ns -> server ns, one TCP stream.
iperf() {
	eval "c=\$TP_C_$1"
	out=$(ip netns exec "$c" timeout $((TPUT_SECONDS + 20)) iperf3 -c $S4 -p "$2" \
		-t "$TPUT_SECONDS" -O 1 -J --connect-timeout 3000 2>/dev/null) || true
	echo "$out" | python3 -c '
import json, sys
try:
    print(int(json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"]))
except Exception:
    print(0)'
}

gbit() { echo "$1" | awk '{printf "%.2f", $1/1e9}'; }

if phase tput; then
	echo "== tput: iperf3 ${TPUT_SECONDS}s + 1s warm-up per run, $TPUT_REPS rounds of 5 runs"
	nsn=3
	for t in N K S U; do
		eval "TP_C_$t=$PFX-$nsn TP_S_$t=$PFX-$((nsn + 1))"
		make_pair "$PFX-$nsn" "$PFX-$((nsn + 1))"
		for p in 5201 5202; do
			ip netns exec "$PFX-$((nsn + 1))" timeout 1800 iperf3 -s -p $p >/dev/null 2>&1 &
			PIDS="$PIDS $!"
		done
		wait_until 10 ip netns exec "$PFX-$((nsn + 1))" sh -c "ss -ltn | grep -q ':5202 '" ||
			die "iperf3 did not start"
		nsn=$((nsn + 2))
	done
	client_conf "$TMP/tk.conf" kernel 5201 5202
	client_conf "$TMP/ts_c.conf" kernel 5201 5202
	server_conf "$TMP/ts_s.conf" kgwb_s 10 1 4096 reset 5201
	client_conf "$TMP/tu.conf" user 5201 5202
	start_kgw tk "$TP_C_K" "$TMP/tk.conf"
	start_kgw tsc "$TP_C_S" "$TMP/ts_c.conf"
	start_kgw tss "$TP_S_S" "$TMP/ts_s.conf"
	start_kgw tu "$TP_C_U" "$TMP/tu.conf"
	for round in $(seq "$TPUT_REPS"); do
		# Rotate the order, so that no configuration always runs first.
		order="N:5202 K:5202 S:5201 S:5202 U:5202"
		for _ in $(seq $(((round - 1) % 5))); do
			order="${order#* } ${order%% *}"
		done
		for run in $order; do
			v=$(iperf "${run%:*}" "${run#*:}")
			case $run in
			N:*) base=$v ;; K:*) ck=$v ;; S:5201) sp=$v ;; S:5202) up=$v ;; U:*) cu=$v ;;
			esac
		done
		if [ "$round" = 1 ] && [ "$PERF" = 1 ]; then
			perf_start tput_user "$PID_tu"
			iperf U 5202 >/dev/null
			perf_stop tput_user
		fi
		res "tput.round base=$base ck=$ck sp=$sp up=$up cu=$cu"
		echo "  round $round (Gbit/s): none $(gbit "$base"), client kernel $(gbit "$ck")," \
			"both roles: protected $(gbit "$sp") unprotected $(gbit "$up"), client user $(gbit "$cu")"
	done
	for n in tk tsc tss tu; do
		eval "stop_pid \$PID_$n"
	done
fi

# --- gw, connrate (bench/gw.sh) -----------------------------------------------
. "$TOP/bench/gw.sh"

# --- integ (bench/integ.sh) ----------------------------------------------------
. "$TOP/bench/integ.sh"

res "meta.load_end $(cut -d' ' -f1 /proc/loadavg)"
echo
python3 "$TOP/bench/report.py" "$TMP"
