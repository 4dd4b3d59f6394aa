#!/bin/sh
# Restart safety: a rate-limited scp through the client role survives
# kill -9 (IPv4) or SIGTERM (IPv6) of the client's knockgw and a restart a
# second later, on both translation paths, and arrives with the same sha256.
# The kernel path needs no daemon for an established flow (after a clean
# stop with on_stop "open" a keeper table keeps conntrack running for it;
# with "hide", the default, the user path's, the whole table stays); the
# user path finds each flow's shift in its conntrack entry again.
. "$(dirname "$0")/lib/lib.sh"

make_topology
start_sshd
K=$(key_file k)
start_server "$(entry 22)"
SRV_PID=$KGW_PID
head -c 3000000 /dev/urandom >"$TMP/src.bin"
want=$(sha256sum <"$TMP/src.bin" | cut -d' ' -f1)
SCP="scp -q $SSH_OPTS -o ConnectTimeout=10"

for kind in kernel user; do
	if [ $kind = kernel ]; then stop='on_stop = "open";'; else stop=; fi
	knock_conf "$TMP/client-$kind.conf" "" "translate = \"$kind\"; $stop"
	for dst in $S4 "[$S6]"; do
		if [ "$dst" = $S4 ]; then sig=KILL; else sig=TERM; fi
		start_knockgw "$NS_C" "$TMP/client-$kind.conf"
		rm -f "$TMP/dst.bin"
		# 3 MB at 2400 kbit/s: about ten seconds on the wire.
		in_c timeout 90 $SCP -l 2400 "$TMP/src.bin" "root@$dst:$TMP/dst.bin" \
			>"$TMP/scp.log" 2>&1 &
		scp_pid=$!
		# Kill the daemon once the transfer is under way.
		wait_for 20 sh -c "[ -s '$TMP/dst.bin' ]"
		sleep 1
		kill -$sig "$KGW_PID"
		wait_for 5 sh -c "! kill -0 $KGW_PID"
		if [ $sig = TERM ] && [ $kind = kernel ]; then
			check "$kind path, on_stop open: a clean stop left the keeper table for the open flow" \
				grep -q "translated connection(s) still open" "$TMP/knockgw-$NS_C.log"
		elif [ $sig = TERM ]; then
			check "$kind path, on_stop hide: a clean stop left the table" \
				grep -q "table inet knockgw stays" "$TMP/knockgw-$NS_C.log"
		fi
		sleep 1
		start_knockgw "$NS_C" "$TMP/client-$kind.conf"
		if wait "$scp_pid"; then rc=0; else rc=$?; fi
		check "$kind path, $dst: scp finished after SIG$sig and restart (rc $rc)" [ $rc = 0 ]
		check "$kind path, $dst: the copy has the same sha256" \
			[ "$(sha256sum <"$TMP/dst.bin" | cut -d' ' -f1)" = "$want" ]
		stop_knockgw
	done
done
KGW_PID=$SRV_PID
check "the server stayed up throughout" kill -0 "$SRV_PID"
finish
