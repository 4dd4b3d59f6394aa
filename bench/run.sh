#!/bin/sh
# bench/run.sh - `make bench`: knockgw's performance figures, measured in
# network namespaces of this machine.  Not part of `make check`; nothing here
# is a pass/fail test.
#
#   client ns kgwb-<pid>-1                   server ns kgwb-<pid>-2
#   vc 192.0.2.1/24 -------- veth ---------- vs 192.0.2.2/24
#      2001:db8::1/64                           2001:db8::2/64
#   203.0.113.0/24 local (spoofed flood      route 203.0.113.0/24 via vc
#   sources get their answers delivered)     listeners :8001 :8002 :8003,
#   synflood, synprobe, client-role knockgw  nothing on :7001-7005 (closed),
#                                            knockgw
#   The tput phase adds four more such pairs (kgwb-<pid>-3 .. -10), one per
#   configuration, with iperf3 servers on :5201 and :5202.
#
# Phases (BENCH_PHASES, default all): synrate flood latency tput gw connrate integ.
#   synrate  drain rate of a backlog queued while the reader was stopped:
#            knockgw (count 1 and 2), nfq_min, and their drop variants
#   flood    200 knocks while the daemon is flooded at its saturation rate,
#            and while closed ports are flooded past its capacity
#   latency  raw SYN -> answer times (knocked vs unprotected, and the same
#            through the minimal reader: connect_added_floor_us), every
#            scan probe type to a protected vs a closed port, IPv4 and
#            IPv6, idle and while a client knocks, with the shipped
#            defaults (rst_timing_delta_us); and connect() through both
#            roles
#   tput     iperf3 with and without the roles
#   gw       iperf3 through a router: gateway client role (from), gateway
#            server role (forward), each against the same route without
#            knockgw (bench/gw.sh, 3-namespace topologies drawn there)
#   connrate new connections per second through the client role (kernel
#            path) against plain connects (bench/gw.sh, bench/connrate.c)
#   integ    ssh logins through knock-connect (integrity mode) during a key
#            holder's flood of integrity flows that never complete, against
#            quiet ones (bench/integ.sh)
# Knobs: BUILD (default build), BENCH_REPS (7), BENCH_PROBES (40: probes of
# each type and port per latency round), BENCH_FLOOD_REPS (3),
# BENCH_TPUT_REPS (8, also gw's rounds), BENCH_TPUT_SECONDS (3),
# BENCH_CONN_REPS (as BENCH_TPUT_REPS), BENCH_CONN_COUNT (30000),
# BENCH_CONN_INFLIGHT (64), BENCH_CONN_SECONDS (3), BENCH_KEEP=DIR (the raw
# measurements and logs are copied there at the end), BENCH_PERF=1 (extra,
# unmeasured drains of knockgw, knocks and refused knocks one at a time, an
# iperf3 run of the user path and a connrate run of the client role under
# `perf record`; the profiles are left in $BUILD/bench/perf-*.txt).
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
NPROBES=${BENCH_PROBES:-40}
FLOOD_REPS=${BENCH_FLOOD_REPS:-3}
TPUT_REPS=${BENCH_TPUT_REPS:-8}
TPUT_SECONDS=${BENCH_TPUT_SECONDS:-3}
PHASES=${BENCH_PHASES:-"synrate flood latency tput gw connrate integ"}
PERF=${BENCH_PERF:-0}

C4=192.0.2.1
S4=192.0.2.2
C6=2001:db8::1
S6=2001:db8::2
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
. "$TOP/tests/netns/lib/base.sh"

cleanup() {
	set +e
	# shellcheck disable=SC2086
	stop_pids $PIDS
	[ -z "${BENCH_KEEP:-}" ] || cp -r "$TMP" "$BENCH_KEEP"
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

# server_conf FILE TABLE QNUM QCOUNT MAXLEN ON_FAIL PORT...: a server
# configuration (the shipped defaults but for these), plus the lines in
# $SC_EXTRA.  knockgw uses 3 x QCOUNT queues from QNUM (SYNs, probes, data).
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
	${SC_EXTRA:-}
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

# knock_isn PORT TSVAL [DST]: the native knock ISN for DST (S4):PORT
# (knock-connect isn).
knock_isn() {
	"$KC" isn --mode native --key-file "$TMP/k.key" --dst "${3:-$S4}" --port "$1" --tsval "$2"
}

rand32() { od -An -N4 -tu4 /dev/urandom | tr -d ' '; }

# minflt PID: the minor page faults of process PID so far, its threads' too.
minflt() { cut -d' ' -f10 "/proc/$1/stat"; }

# sports N: sets SP to the first of N source ports no probe of this run has
# used lately (20000-59999, in turn).  A probe that reuses a recent probe's
# addresses and ports meets the conntrack entry that one left (closed, for
# 10 s): a SYN reopens it, but an ACK is then invalid and the kernel answers
# it at once, protected port or closed; what the two ports' gaps would show
# is which entries the reused ports met.  Call it in the main shell (it
# keeps its place in SPORT_NEXT).
SPORT_NEXT=20000
sports() {
	[ $((SPORT_NEXT + $1)) -le 60000 ] || SPORT_NEXT=20000
	SP=$SPORT_NEXT
	SPORT_NEXT=$((SPORT_NEXT + $1))
}

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
	ip -n "$1" addr add $C6/64 dev vc nodad
	ip -n "$2" addr add $S6/64 dev vs nodad
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

# Listeners, IPv4 and IPv6: 8001 (protected), 8002 (never protected) and
# 8003 (protected, the minimal reader decides its SYNs) for the latency
# probes.
ip netns exec "$NS_S" timeout 1800 python3 -c '
import socket, sys, time
ss = []
for p in (8001, 8002, 8003):
    s = socket.socket(socket.AF_INET6)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    s.bind(("::", p))
    s.listen(4096)
    ss.append(s)
time.sleep(1800)
' &
PIDS="$PIDS $!"
wait_until 10 in_s sh -c "ss -ltn | grep -q ':8003 '" || die "listeners did not start"

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
	# Several daemons share the namespace here: closed ports are left to
	# the kernel (each table would queue them), SYN decisions are the
	# subject.  Each uses 3 x count queues from its num.
	SC_EXTRA='closed_ports = "kernel";'
	server_conf "$TMP/d1.conf" kgwb_d1 0 1 $BIGQ reset 7001
	server_conf "$TMP/d2.conf" kgwb_d2 10 2 $BIGQ reset 7003
	server_conf "$TMP/d3.conf" kgwb_d3 20 1 $BIGQ drop 7004
	server_conf "$TMP/r1.conf" kgwb_r1 30 1 $BIGQ reset 7002
	server_conf "$TMP/r3.conf" kgwb_r3 40 1 $BIGQ drop 7005
	SC_EXTRA=
	start_kgw d1 "$NS_S" "$TMP/d1.conf"
	start_kgw d2 "$NS_S" "$TMP/d2.conf"
	start_kgw d3 "$NS_S" "$TMP/d3.conf"
	RANGE=$(queue_field 0 5)
	res "meta.copy_range $RANGE"
	# The references get the daemon's own ruleset: a knockgw installs its
	# table and is killed (-9 leaves the table), nfq_min binds its queue.
	for r in r1:30:7002 r3:40:7005; do
		name=${r%%:*} q=$(echo "$r" | cut -d: -f2)
		start_kgw "${name}kgw" "$NS_S" "$TMP/$name.conf"
		eval "stop_pid \$PID_${name}kgw 9"
		wait_until 5 sh -c "! ip netns exec $NS_S grep -q '^ *$q ' /proc/net/netfilter/nfnetlink_queue" ||
			die "queue $q still bound"
	done
	start_nfqmin r1 30 "$RANGE"
	start_nfqmin r3 40 "$RANGE" -d
	for round in $(seq "$REPS"); do
		echo " round $round"
		# Every other round in reverse order, so that neither side of a
		# ratio always runs first.
		if [ $((round % 2)) = 1 ]; then
			drain daemon d1 "$PID_d1" 0 1 7001
			drain nfqmin r1 "$PID_r1" 30 1 7002
			drain daemon_2q d2 "$PID_d2" 10 2 7003
			drain daemon_drop d3 "$PID_d3" 20 1 7004
			drain nfqmin_drop r3 "$PID_r3" 40 1 7005
		else
			drain nfqmin_drop r3 "$PID_r3" 40 1 7005
			drain daemon_drop d3 "$PID_d3" 20 1 7004
			drain daemon_2q d2 "$PID_d2" 10 2 7003
			drain nfqmin r1 "$PID_r1" 30 1 7002
			drain daemon d1 "$PID_d1" 0 1 7001
		fi
	done
	if [ "$PERF" = 1 ]; then
		for t in d1:0:7001 d3:20:7004; do
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

# The server daemon for the other phases: the shipped defaults (closed
# ports answered through the daemon too), queues 50 (SYNs), 51 (probes), 52
# (data).  sk.conf: the same with closed_ports = "kernel" (the opt-out).
# fl.conf: the minimal reader's table (SYNs to 8003 queued to 60), with
# mark bits of its own so the two tables' codes never meet; installed by a
# knockgw that is then killed (-9 leaves the table), closed ports the
# kernel's (one table queueing them is enough).
QS=50
QF=60
FL_MASK=0x00070000
FL_ACCEPTED=0x00050000	# code 5 (ACCEPTED, marks.h) at the mask's lowest bit
server_conf "$TMP/s.conf" kgwb_s $QS 1 4096 reset 5201 7001 8001
SC_EXTRA='closed_ports = "kernel";'
server_conf "$TMP/sk.conf" kgwb_s $QS 1 4096 reset 5201 7001 8001
sed -i "s|$TMP/s.conf.sock|$TMP/sk.conf.sock|" "$TMP/sk.conf"
SC_EXTRA="closed_ports = \"kernel\"; rules = { table = \"kgwb_f\"; mark_mask = $FL_MASK; };"
server_conf "$TMP/fl.conf" kgwb_f $QF 1 4096 reset 8003
sed -i '/^rules = { table = "kgwb_f"; };$/d' "$TMP/fl.conf"
SC_EXTRA=
client_conf "$TMP/ck.conf" kernel 8001

# knock_list FILE N BASE PORT [DST]: N valid knocks to DST:PORT, TSvals from
# BASE on.
knock_list() {
	: >"$1"
	for i in $(seq "$2"); do
		ts=$(($3 + i * 7919))
		echo "knock $4 0x$(knock_isn "$4" $ts "${5:-$S4}") $ts" >>"$1"
	done
}

# --- flood -----------------------------------------------------------------
# flood_round TAG ROUND PORT RATE: 200 knocks (synprobe batch) while the
# flood generator sends invalid SYNs to PORT at RATE (0: as fast as it
# goes), drainmon watching queue set QWATCH; one result line.
flood_round() {
	knock_list "$TMP/knocks" 200 $(($2 * 1000000)) 8001
	if [ "$4" = 0 ]; then pace=""; count=2000000; else pace="--rate $4"; count=$(($4 * 8)); fi
	# shellcheck disable=SC2086
	in_c "$BB/synflood" --dst $S4 --dport "$3" --src $SPOOF --nsrc $NSPOOF $pace \
		--count $count --seconds 7 --seed "$(rand32)" >"$TMP/paced.out" &
	gen=$!
	sleep 0.5
	in_s "$BB/drainmon" -w 5 -q "$QWATCH" >"$TMP/watch.out" &
	mon=$!
	sports 200
	in_c "$BB/synprobe" batch --src $C4 --dst $S4 --list "$TMP/knocks" --sport-base $SP \
		--gap-us 10000 --retry-ms 1000 --timeout-ms 3000 >"$TMP/batch-$1-$2.out"
	wait $mon || true
	wait $gen || true
	sum=$(tail -1 "$TMP/batch-$1-$2.out")
	ok=$(echo "$sum" | get synack)
	first=$(echo "$sum" | get synack_first_try)
	res "$1.round ok=$ok first=$first probes=$(echo "$sum" | get probes)" \
		"rate=$(get rate <"$TMP/watch.out") queue_dropped=$(get queue_dropped <"$TMP/watch.out")" \
		"gen=$(get rate <"$TMP/paced.out")"
	echo "  round $2: $ok/200 SYN-ACK ($first at the first SYN); flood $(get rate <"$TMP/paced.out")/s," \
		"daemon decided $(get rate <"$TMP/watch.out")/s, queue-full drops $(get queue_dropped <"$TMP/watch.out")"
}

if phase flood; then
	echo "== flood: 200 knocks while the server is flooded at its saturation rate ($FLOOD_REPS rounds)"
	start_kgw s "$NS_S" "$TMP/s.conf"
	# Saturation: flood as fast as the generator goes, count what the daemon decides.
	in_c "$BB/synflood" --dst $S4 --dport 8001 --src $SPOOF --nsrc $NSPOOF --count 2000000 \
		--seconds 4 >"$TMP/calib.out" &
	gen=$!
	sleep 1
	w=$(in_s "$BB/drainmon" -w 2 -q $QS)
	wait $gen || true
	SAT=$(echo "$w" | get rate)
	[ "${SAT:-0}" -gt 1000 ] || die "no saturation rate measured ($w)"
	res "flood.saturation rate=$SAT queue_dropped=$(echo "$w" | get queue_dropped) gen=$(get rate <"$TMP/calib.out")"
	echo "  saturation: the daemon decided $SAT SYN/s under an unpaced flood of $(get rate <"$TMP/calib.out")/s" \
		"(queue full drops: $(echo "$w" | get queue_dropped) in 2 s)"
	QWATCH=$QS
	for round in $(seq "$FLOOD_REPS"); do
		flood_round flood "$round" 8001 "$SAT"
	done
	# Closed ports flooded past the daemon's capacity (unpaced, 253
	# spoofed sources): their probes have a queue of their own, so the
	# knocks' queue stays free; what does not fit in the probe queue is
	# dropped by the kernel (those probes get no answer).
	echo "== flood: 200 knocks while closed port 7003 is flooded as fast as the generator goes ($FLOOD_REPS rounds)"
	QWATCH=$((QS + 1))
	for round in $(seq "$FLOOD_REPS"); do
		flood_round pflood "$round" 7003 0
	done
	stop_pid "$PID_s"
fi

# --- latency ---------------------------------------------------------------
# The scan probe types, as "name:flags" (synprobe's letters): nmap -sS, -sA,
# -sW (an ACK too), -sF, -sN, -sX, -sM.
PROBE_TYPES="syn:S ack:A window:A fin:F null:- xmas:FPU maimon:FA"

# probe_rounds OUT FAM [knocking]: REPS rounds; each sends NPROBES probes of
# every type to the protected port 8001 (label p_TYPE) and to the closed
# port 7002 (c_TYPE), each pair back to back, which one first alternating;
# answer times into $TMP/OUT-ROUND.out.  With "knocking", a client knocks
# at 8001 meanwhile (a valid knock every 2 ms, from the same address).
probe_rounds() {
	if [ "$2" = 4 ]; then pr_src=$C4 pr_dst=$S4; else pr_src=$C6 pr_dst=$S6; fi
	for round in $(seq "$REPS"); do
		: >"$TMP/probes"
		for i in $(seq "$NPROBES"); do
			for t in $PROBE_TYPES; do
				p="p_${t%%:*} 8001 $(rand32) $i ${t#*:}"
				c="c_${t%%:*} 7002 $(rand32) $i ${t#*:}"
				if [ $((i % 2)) = 0 ]; then echo "$p"; echo "$c"; else echo "$c"; echo "$p"; fi
			done
		done >>"$TMP/probes"
		kn=""
		if [ "${3:-}" = knocking ]; then
			knock_list "$TMP/bgknocks" 300 $((round * 1000000 + 500000)) 8001 "$pr_dst"
			sports 300
			in_c "$BB/synprobe" batch --src "$pr_src" --dst "$pr_dst" --list "$TMP/bgknocks" \
				--sport-base $SP --gap-us 2000 --retry-ms 0 --timeout-ms 1000 \
				>"$TMP/bgknocks-$1-$round.out" &
			kn=$!
		fi
		sports "$(wc -l <"$TMP/probes")"
		in_c "$BB/synprobe" rtt --src "$pr_src" --dst "$pr_dst" --list "$TMP/probes" \
			--sport-base $SP --gap-us 300 --timeout-ms 1000 >"$TMP/$1-$round.out"
		[ -z "$kn" ] || wait "$kn" || true
	done
}

if phase latency; then
	echo "== latency: SYN -> answer on the wire, $REPS rounds each: knock / unprotected / minimal"
	echo "   reader's knock / bad knock / closed port (4 x 100); every probe type to a protected and"
	echo "   a closed port ($NPROBES each), IPv4 and IPv6, idle and while a client knocks, shipped"
	echo "   defaults; closed_ports = \"kernel\" (SYNs); then 2 x 300 connect()s"
	# rtt_rounds OUT KIND...: REPS rounds of 100 interleaved probes of each
	# kind (knock, plain, floor, bad, closed), answer times into
	# $TMP/OUT-ROUND.out.
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
					floor) echo "floor 8003 $(rand32) $ts" ;;
					bad) echo "bad 8001 $(rand32) $ts" ;;
					closed) echo "closed 7002 $(rand32) $ts" ;;
					esac
				done >>"$TMP/probes"
			done
			sports "$(wc -l <"$TMP/probes")"
			in_c "$BB/synprobe" rtt --src $C4 --dst $S4 --list "$TMP/probes" \
				--sport-base $SP --gap-us 300 --timeout-ms 1000 >"$TMP/$r_out-$round.out"
		done
	}
	# The minimal reader, on the same rules (its own table for 8003): it
	# accepts every SYN with the ACCEPTED code, as knockgw lets a knock
	# through; its knock path is the queue round trip and nothing more.
	start_kgw fl "$NS_S" "$TMP/fl.conf"
	stop_pid "$PID_fl" 9
	wait_until 5 sh -c "! ip netns exec $NS_S grep -q '^ *$QF ' /proc/net/netfilter/nfnetlink_queue" ||
		die "queue $QF still bound"
	start_kgw s "$NS_S" "$TMP/s.conf"
	start_nfqmin fl $QF "$(queue_field $QS 5)" "-M $FL_ACCEPTED"
	# The daemon's page faults meanwhile (a table page touched for the
	# first time in the packet path costs tens of microseconds here).
	f0=$(minflt "$PID_s")
	rtt_rounds rtt knock plain floor bad closed
	res "rtt.faults daemon=$(($(minflt "$PID_s") - f0)) packets=$((REPS * 300))"
	"$KNOCKGW" status -c "$TMP/s.conf" >"$TMP/status-rtt.txt" 2>&1 || true
	stop_pid "$PID_fl"
	in_s nft delete table inet kgwb_f
	if [ "$PERF" = 1 ]; then
		# The knock path and the refusal path, one probe at a time.
		perf_start knock "$PID_s"
		reps=$REPS
		REPS=2
		rtt_rounds perf knock bad
		REPS=$reps
		perf_stop knock
	fi
	for fam in 4 6; do
		probe_rounds "scan$fam" $fam
		probe_rounds "scanknock$fam" $fam knocking
	done
	# The opt-out, closed_ports = "kernel": the queue round trip shows.
	stop_pid "$PID_s"
	start_kgw s "$NS_S" "$TMP/sk.conf"
	rtt_rounds rttk bad closed
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
	server_conf "$TMP/ts_s.conf" kgwb_s $QS 1 4096 reset 5201
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
