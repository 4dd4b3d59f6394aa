#!/bin/sh
# A key holder's flood of integrity flows that never complete: each source
# knocks for many connections (one knock, replayed from its own ports,
# which replay protection allows) and trickles one-byte segments past the
# checked range into each.  The flows time out (or are refused at their
# source's share) while their segments keep coming.  On the old code every
# segment of a flow the daemon no longer knew cost a verdict flush and a
# socket abort or a closed-port RST; at scale (bench: integ_flood_login_ratio)
# that starved the queue.  Now a flow is reset once and its late segments
# are dropped quietly (integ_stray_quiet), so resets stay within the
# number of flows however many segments come, and a real user's ssh login
# through knock-connect, during the flood, gets in.  Paths and counters
# only: the time a login takes is the benchmark's.
#
#   client ns $NS_C                          server ns $NS_S
#   +------------------------------+         +-------------------------------+
#   | vc 192.0.2.1 (the user: ssh, |--veth---| sshd :22, sink.py :2200, both |
#   |    knock-connect, knockgw)   |         | integrity_len 20; knockgw,    |
#   |    192.0.2.10-12 (flood:     |         | queue.maxlen 256,             |
#   |    integflood.py)            |         | integrity_timeout 2           |
#   +------------------------------+         +-------------------------------+
. "$(dirname "$0")/lib/lib.sh"

FLOOD="python3 $TOP/tests/netns/lib/integflood.py"
SOURCES="192.0.2.10 192.0.2.11 192.0.2.12"
FLOWS=40	# per source
SEGS=8		# per flow, 0.5 s apart: the last ones long after the timeout

make_topology
quiet_client_rsts
for a in $SOURCES; do
	in_c ip addr add "$a"/24 dev vc
done
# The flood's sources have no sockets: their kernel must not reset the flows.
in_c nft add rule inet proberquiet out ip saddr 192.0.2.10-192.0.2.12 tcp flags rst drop
start_sshd
start_sink 2200
K=$(key_file k)
knock_conf "$TMP/client.conf" "integrity_len = 20;"
start_knockgw "$NS_C" "$TMP/client.conf"
start_server "$(entry 22 "integrity_len = 20;"), $(entry 2200 "integrity_len = 20;")" \
	"queue = { maxlen = 256; };" "limits = { integrity_timeout = 2; };"

printf 'never-sent-range-020' >"$TMP/flood.data"
srcargs=""
ts=7000
for a in $SOURCES; do
	ts=$((ts + 1))
	srcargs="$srcargs --source $a=$(isn native "$K" $S4 2200 $ts --integrity-len 20 \
		--payload-file "$TMP/flood.data"):$ts"
done
# shellcheck disable=SC2086
in_c $FLOOD --iface vc --dst $S4 --dport 2200 --skip 40 $srcargs \
	--flows $FLOWS --segs $SEGS --interval 0.5 --timeout 30 --ready "$TMP/flood.ready" \
	>"$TMP/flood.json" &
FLOOD_PID=$!
wait_for 10 test -e "$TMP/flood.ready"

# A real user logs in meanwhile: ssh through knock-connect, integrity mode.
SSH="ssh $SSH_OPTS -o ConnectTimeout=10"
PROXY="ProxyCommand=$KC -s $TMP/client.sock -w 10 %h %p"
# shellcheck disable=SC2086 # commands with their options
out=$(in_c timeout 30 $SSH -o "$PROXY" root@$S4 echo logged-in 2>"$TMP/ssh.err") || true
check "a real user's ssh login through knock-connect during the flood gets in" \
	[ "$out" = logged-in ]
[ "$out" = logged-in ] || cat "$TMP/ssh.err"
wait "$FLOOD_PID" || true
echo "# flood: $(cat "$TMP/flood.json")"

flows=$(counter syn_accepted)
unknown=$(counter integ_unknown)
quiet=$(counter integ_stray_quiet)
echo "# knocks accepted $flows, timed out $(counter integ_timeout), source_cap $(counter source_cap)," \
	"segments of unknown flows $unknown, dropped quietly ${quiet:-?}, closed-port RSTs $(counter rst_sent)"
check "the flood's flows were let in and ended (timed out)" [ "$(counter integ_timeout)" -gt 0 ]
check "segments of flows the daemon had reset came (the path under test)" [ "$unknown" -gt 0 ]
check "... and were dropped quietly, each flow reset once" [ "${quiet:-0}" -gt 0 ]
check "resets of unknown flows' segments stay within the flows (${unknown} - ${quiet:-?} <= $flows)" \
	[ $((unknown - ${quiet:-0})) -le "$flows" ]
check "closed-port RSTs stay within the flows too" [ "$(counter rst_sent)" -le "$flows" ]
check "the service never read a flood byte" sh -c "! grep -q x '$TMP/sink.bin'"
check "the daemon is still running" kill -0 "$KGW_PID"
finish
