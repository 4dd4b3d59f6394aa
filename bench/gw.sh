# bench/gw.sh - the gateway and connection-rate phases of bench/run.sh;
# sourced by it (its helpers, $TMP, $PFX, $PIDS, res, start_kgw, ...), not run.
#
# gw: iperf3 through a router, in six namespace triples set up once (each
# LAN/client ns -- router ns -- server ns, veth pairs, offloads at their
# defaults), so the runs being compared follow each other within seconds:
#   LAN 10.0.0.2/24 -- r0 10.0.0.1 | r1 203.0.113.1 -- 203.0.113.2 iperf3
#     (the router masquerades out of r1; the server has no route to the LAN)
#     GN  no knockgw anywhere
#     GC  router: client role for the LAN (from = 10.0.0.0/24, kernel path);
#         server: server role protecting :5201
#   client 192.0.2.1/24 -- r0 192.0.2.254 | r1 203.0.113.254 -- 203.0.113.2
#     (routed both ways, no NAT)
#     SN  no knockgw anywhere
#     SK  client: client role (kernel path) knocking for :5201; router: none
#     SC  client: the same client role; router: conntrack on (a one-rule
#         table reading ct mark), no knockgw: shown only, the part of the
#         router's cost that is conntrack's (knockgw's rules turn it on)
#     SF  client: the same client role; router: server role, forward entry
#         protecting 203.0.113.2:5201
#   gw_client_tput_ratio = GC / GN, gw_server_tput_ratio = SF / SK (the
#   router's role alone); SF / SN (everything vs nothing), SC / SK and SF / SC
#   are shown beside.
#
# connrate: connections per second, three namespace pairs (make_pair):
#     CN  no knockgw
#     CT  no knockgw, conntrack on (a one-rule table that reads ct mark):
#         the share of the client role's cost that is conntrack's, shown only
#     CK  client role (kernel path) knocking for :9001
#   each with 16 more client addresses (192.0.2.101-116, the connections'
#   sources); the server ns runs a plain listener (connrate serve), no
#   server role.
#   client_conn_rate_ratio = CK / CN.

GW_LAN=10.0.0.2
GW_DST=203.0.113.2
CONN_REPS=${BENCH_CONN_REPS:-$TPUT_REPS}
CONN_COUNT=${BENCH_CONN_COUNT:-30000}
CONN_INFLIGHT=${BENCH_CONN_INFLIGHT:-64}
CONN_SECONDS=${BENCH_CONN_SECONDS:-3}
CONN_NSRC=16		# client source addresses 192.0.2.101 .. 116

# make_triple KIND A R S: namespaces A (LAN host or client), R (router), S
# (server), joined by two veth pairs; KIND masq or routed (see above).
make_triple() {
	for ns in "$2" "$3" "$4"; do
		ip netns add "$ns"
		ip -n "$ns" link set lo up
	done
	ip link add a0 netns "$2" type veth peer name r0 netns "$3"
	ip link add r1 netns "$3" type veth peer name s1 netns "$4"
	ip -n "$4" addr add $GW_DST/24 dev s1
	if [ "$1" = masq ]; then
		ip -n "$2" addr add $GW_LAN/24 dev a0
		ip -n "$3" addr add 10.0.0.1/24 dev r0
		ip -n "$3" addr add 203.0.113.1/24 dev r1
		gw_via=10.0.0.1
		ip netns exec "$3" nft -f - <<-EON
		table inet kgwb_nat {
			chain post {
				type nat hook postrouting priority srcnat; policy accept;
				oifname "r1" masquerade
			}
		}
		EON
	else
		ip -n "$2" addr add $C4/24 dev a0
		ip -n "$3" addr add 192.0.2.254/24 dev r0
		ip -n "$3" addr add 203.0.113.254/24 dev r1
		gw_via=192.0.2.254
	fi
	ip -n "$2" link set a0 up
	ip -n "$3" link set r0 up
	ip -n "$3" link set r1 up
	ip -n "$4" link set s1 up
	ip -n "$2" route add default via $gw_via
	# masq: the server has no route to the LAN, only masqueraded flows get answers
	[ "$1" = masq ] || ip -n "$4" route add default via 203.0.113.254
	ip netns exec "$3" sysctl -qw net.ipv4.ip_forward=1
	wait_until 5 ip netns exec "$2" ping -c1 -W1 $GW_DST || die "triple $2/$3/$4 does not route"
}

# gw_client_conf FILE FROM: a client role knocking for $GW_DST:5201
# (FROM: a `from` list for the gateway client role, or empty for the host's own).
gw_client_conf() {
	cat >"$1" <<-EOC
	translate = "kernel";
	queue = { num = 20; };
	rules = { table = "kgwb_client"; };
	control_socket = "$1.sock";
	keys = ( { name = "k"; file = "$TMP/k.key"; } );
	knock = ( { dst = "$GW_DST"; port = 5201; mode = "native"; key = "k";${2:+ from = [ \"$2\" ];} } );
	EOC
}

# kgw_counters NAME PID COUNTER...: "COUNTER=VALUE ..." from the daemon's
# log after a SIGUSR1 ("counter NAME=VALUE" lines).
kgw_counters() {
	kc_log=$TMP/$1.log kc_pid=$2
	shift 2
	kc_before=$(lines '^counters:' "$kc_log")
	kill -USR1 "$kc_pid"
	wait_until 5 sh -c "[ \$(grep -c '^counters:' '$kc_log') -gt $kc_before ]" || return 0
	sleep 0.2
	for c in "$@"; do
		printf '%s=%s ' "$c" "$(sed -n "s/^counter $c=\([0-9]*\)$/\1/p" "$kc_log" | tail -1)"
	done
}

# gw_iperf NS PORT: bits/s received, NS -> $GW_DST:PORT, one TCP stream.
gw_iperf() {
	out=$(ip netns exec "$1" timeout $((TPUT_SECONDS + 20)) iperf3 -c $GW_DST -p "$2" \
		-t "$TPUT_SECONDS" -O 1 -J --connect-timeout 3000 2>/dev/null) || true
	echo "$out" | python3 -c '
import json, sys
try:
    print(int(json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"]))
except Exception:
    print(0)'
}

if phase gw; then
	echo "== gw: iperf3 through a router ${TPUT_SECONDS}s + 1s warm-up per run, $TPUT_REPS rounds of 6 runs"
	n=21
	for t in GN:masq GC:masq SN:routed SK:routed SC:routed SF:routed; do
		tag=${t%:*}
		eval "GW_A_$tag=$PFX-$n GW_R_$tag=$PFX-$((n + 1)) GW_S_$tag=$PFX-$((n + 2))"
		make_triple "${t#*:}" "$PFX-$n" "$PFX-$((n + 1))" "$PFX-$((n + 2))"
		ip netns exec "$PFX-$((n + 2))" timeout 1800 iperf3 -s -p 5201 >/dev/null 2>&1 &
		PIDS="$PIDS $!"
		wait_until 10 ip netns exec "$PFX-$((n + 2))" sh -c "ss -ltn | grep -q ':5201 '" ||
			die "iperf3 did not start"
		n=$((n + 3))
	done
	gw_client_conf "$TMP/gwc.conf" 10.0.0.0/24
	server_conf "$TMP/gws.conf" kgwb_s 10 1 4096 reset 5201
	gw_client_conf "$TMP/gwk.conf" ""
	cat >"$TMP/gwf.conf" <<-EOC
	queue = { num = 10; };
	rules = { table = "kgwb_fwd"; };
	control_socket = "$TMP/gwf.conf.sock";
	keys = ( { name = "k"; file = "$TMP/k.key"; } );
	protect = ( { port = 5201; mode = "native"; keys = [ "k" ]; forward = true;
		      addresses = [ "$GW_DST" ]; } );
	EOC
	start_kgw gwc "$GW_R_GC" "$TMP/gwc.conf"
	start_kgw gws "$GW_S_GC" "$TMP/gws.conf"
	start_kgw gwk "$GW_A_SK" "$TMP/gwk.conf"
	sed "s|$TMP/gwk.conf.sock|$TMP/gwfc.conf.sock|" "$TMP/gwk.conf" >"$TMP/gwfc.conf"
	start_kgw gwfc "$GW_A_SF" "$TMP/gwfc.conf"
	start_kgw gwf "$GW_R_SF" "$TMP/gwf.conf"
	sed "s|$TMP/gwk.conf.sock|$TMP/gwsc.conf.sock|" "$TMP/gwk.conf" >"$TMP/gwsc.conf"
	start_kgw gwsc "$GW_A_SC" "$TMP/gwsc.conf"
	ip netns exec "$GW_R_SC" nft -f - <<-EON
	table inet kgwb_ct {
		chain prerouting {
			type filter hook prerouting priority -150; policy accept;
			ct mark 0x40000000 counter
		}
	}
	EON
	for round in $(seq "$TPUT_REPS"); do
		order="GN GC SN SK SC SF"
		for _ in $(seq $(((round - 1) % 6))); do
			order="${order#* } ${order%% *}"
		done
		for run in $order; do
			eval "v=\$(gw_iperf \$GW_A_$run 5201)"
			eval "gw_$run=$v"
		done
		# shellcheck disable=SC2154
		res "gw.round gn=$gw_GN gc=$gw_GC sn=$gw_SN sk=$gw_SK sc=$gw_SC sf=$gw_SF"
		echo "  round $round (Gbit/s): masquerading router: none $(gbit "$gw_GN")," \
			"gateway client $(gbit "$gw_GC"); routed: none $(gbit "$gw_SN")," \
			"client role $(gbit "$gw_SK"), + conntrack router $(gbit "$gw_SC")," \
			"+ gateway server $(gbit "$gw_SF")"
	done
	# The knocked runs were knocked: the daemons' own counters.
	echo "  gateway client: $(kgw_counters gwc "$PID_gwc" client_knocked client_no_entry client_ct_errors)"
	echo "  its server:     $(kgw_counters gws "$PID_gws" syn_accepted syn_refused)"
	echo "  gateway server: $(kgw_counters gwf "$PID_gwf" syn_accepted syn_refused)"
	for n in gwc gws gwk gwfc gwf gwsc; do
		eval "stop_pid \$PID_$n"
	done
fi

if phase connrate; then
	echo "== connrate: $CONN_COUNT connections ($CONN_INFLIGHT in flight, at most ${CONN_SECONDS}s) per run," \
		"$CONN_REPS rounds of 3 runs"
	for t in CN:41 CT:43 CK:45; do
		# shellcheck disable=SC2034
		a=$PFX-${t#*:} b=$PFX-$((${t#*:} + 1))
		eval "CR_A_${t%:*}=$a"
		make_pair "$a" "$b"
		for i in $(seq $CONN_NSRC); do
			ip -n "$a" addr add 192.0.2.$((100 + i))/24 dev vc
		done
		ip netns exec "$b" timeout 1800 "$BB/connrate" serve --port 9001 >"$TMP/serve-$a.log" 2>&1 &
		PIDS="$PIDS $!"
		wait_until 10 grep -q '^ready' "$TMP/serve-$a.log" || die "connrate serve did not start"
	done
	cat >"$TMP/crk.conf" <<-EOC
	translate = "kernel";
	queue = { num = 20; };
	rules = { table = "kgwb_client"; };
	control_socket = "$TMP/crk.conf.sock";
	keys = ( { name = "k"; file = "$TMP/k.key"; } );
	knock = ( { dst = "$S4"; port = 9001; mode = "native"; key = "k"; } );
	EOC
	start_kgw crk "$CR_A_CK" "$TMP/crk.conf"
	ip netns exec "$CR_A_CT" nft -f - <<-EON
	table inet kgwb_ct {
		chain prerouting {
			type filter hook prerouting priority -150; policy accept;
			ct mark 0x40000000 counter
		}
	}
	EON
	# Each run's source ports follow the last run's (connrate --sport-base):
	# no 4-tuple comes back while conntrack still has it.
	sport=0
	for round in $(seq "$CONN_REPS"); do
		order="CN CT CK"
		for _ in $(seq $(((round - 1) % 3))); do
			order="${order#* } ${order%% *}"
		done
		for run in $order; do
			eval "ns=\$CR_A_$run"
			out=$(ip netns exec "$ns" timeout $((CONN_SECONDS + 10)) "$BB/connrate" run --dst $S4 \
				--port 9001 --src 192.0.2.101 --nsrc $CONN_NSRC --sport-base $sport \
				--count "$CONN_COUNT" --inflight "$CONN_INFLIGHT" --seconds "$CONN_SECONDS") || true
			eval "cr_$run=\"\$out\""
		done
		sport=$(((sport + (CONN_COUNT + CONN_NSRC - 1) / CONN_NSRC) % 64512))
		# shellcheck disable=SC2154
		res "connrate.round n=$(echo "$cr_CN" | get rate) k=$(echo "$cr_CK" | get rate)" \
			"t=$(echo "$cr_CT" | get rate) t_fail=$(echo "$cr_CT" | get fail) t_unf=$(echo "$cr_CT" | get unfinished)" \
			"n_ok=$(echo "$cr_CN" | get ok) k_ok=$(echo "$cr_CK" | get ok)" \
			"n_fail=$(echo "$cr_CN" | get fail) k_fail=$(echo "$cr_CK" | get fail)" \
			"n_unf=$(echo "$cr_CN" | get unfinished) k_unf=$(echo "$cr_CK" | get unfinished)"
		echo "  round $round (conn/s): none $(echo "$cr_CN" | get rate), conntrack only $(echo "$cr_CT" | get rate)," \
			"client role $(echo "$cr_CK" | get rate) ($cr_CK)"
	done
	if [ "$PERF" = 1 ]; then
		perf_start connrate "$PID_crk"
		ip netns exec "$CR_A_CK" timeout $((CONN_SECONDS + 10)) "$BB/connrate" run --dst $S4 \
			--port 9001 --src 192.0.2.101 --nsrc $CONN_NSRC --sport-base $sport --count "$CONN_COUNT" \
			--inflight "$CONN_INFLIGHT" --seconds "$CONN_SECONDS" || true
		perf_stop connrate
	fi
	echo "  client role: $(kgw_counters crk "$PID_crk" client_knocked client_retransmits \
		client_stale_replaced client_ct_errors) queue drops $(ip netns exec "$CR_A_CK" awk \
		'$1 == 20 { print $6 }' /proc/net/netfilter/nfnetlink_queue)"
	stop_pid "$PID_crk"
fi
