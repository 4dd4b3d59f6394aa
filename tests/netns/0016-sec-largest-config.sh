#!/bin/sh
# The largest configuration knockgw.conf(5) allows is installed, in full:
# 256 protect entries of 16 addresses each, every one in integrity mode, 256
# knock entries on the user path and closed_ports "daemon" (the most rules
# each entry can make).  It passes `knockgw -n`, so the daemon must run it:
# at start, after a SIGHUP from a smaller one (101 entries, which already
# outgrew a netlink socket's default send buffer), and the table must hold
# every rule print-rules shows.  A knock on the last entry opens it and a
# plain SYN there gets the RST, so the last rule is really there.  When the
# kernel refuses the batch (here: a table of the same name that another
# process owns), the daemon names the refused message, installs nothing and
# exits.
#
#   client ns 192.0.2.1 ---- veth ---- server ns 192.0.2.2, sshd :22,
#                                      knockgw with 256 x 16 entries
. "$(dirname "$0")/lib/lib.sh"

make_topology
quiet_client_rsts
start_sshd
K=$(key_file k)

# conf FILE N: N protect entries (the last one is sshd's port 22, the others
# 10000 + i), each limited to 16 local addresses, and N knock entries.
conf() {
	{
		echo "control_socket = \"$TMP/ctl.sock\";"
		echo 'closed_ports = "daemon";'
		echo 'translate = "user";'
		echo "keys = ( { name = \"k\"; file = \"$K\"; } );"
		echo 'protect = ('
		i=1
		while [ "$i" -le "$2" ]; do
			port=$((10000 + i))
			[ "$i" = "$2" ] && port=22
			sep=,
			[ "$i" = "$2" ] && sep=
			printf '\t{ port = %s; mode = "native"; keys = [ "k" ]; integrity_len = 16;\n' $port
			printf '\t  addresses = [ "%s", "%s"' $S4 $S6
			for a in 10 11 12 13 14 15 16; do
				printf ', "192.0.2.%s", "2001:db8::%s"' $a $a
			done
			printf ' ]; }%s\n' $sep
			i=$((i + 1))
		done
		echo ');'
		echo 'knock = ('
		i=1
		while [ "$i" -le "$2" ]; do
			sep=,
			[ "$i" = "$2" ] && sep=
			printf '\t{ dst = "198.51.100.7"; port = %s; mode = "native"; key = "k"; }%s\n' \
				$((30000 + i)) $sep
			i=$((i + 1))
		done
		echo ');'
	} >"$1"
}

# rules_per_chain: "chain count" lines for the table on stdin (nft syntax).
rules_per_chain() {
	awk '/^\tchain / { c = $2 } /^\t\t/ && !/type [a-z]* hook/ { n[c]++ }
		END { for (c in n) print c, n[c] }' | sort
}
table_rules() {
	in_s nft list table inet knockgw 2>/dev/null | rules_per_chain
}

# works N: the table holds exactly print-rules' rules, the input chain the
# count N entries make, and the last entry answers a knock and refuses a SYN.
works() {
	in_s "$KNOCKGW" print-rules -c "$TMP/knockgw.conf" | rules_per_chain >"$TMP/want.txt"
	table_rules >"$TMP/got.txt"
	check "$1: the table holds every rule print-rules shows" \
		diff -u "$TMP/want.txt" "$TMP/got.txt"
	check "$1: chain prerouting has 1 + $2 x 16 x 6 rules" \
		grep -qx "prerouting $((1 + $2 * 16 * 6))" "$TMP/got.txt"
	check "$1: chain prerouting_nat has 1 + $2 x 16 rules" \
		grep -qx "prerouting_nat $((1 + $2 * 16))" "$TMP/got.txt"
	check "$1: chain postrouting has $2 x 16 rules" \
		grep -qx "postrouting $(($2 * 16))" "$TMP/got.txt"
	# ... and the closed ports' two: a socket takes it, or it is queued.
	check "$1: chain input_closed has $2 x 16 + 2 rules" \
		grep -qx "input_closed $(($2 * 16 + 2))" "$TMP/got.txt"
	# Per knock entry (user path): its SYNs' rule and its later packets'.
	check "$1: chain output_raw has 2 x $2 rules" grep -qx "output_raw $((2 * $2))" "$TMP/got.txt"
	printf 'SSH-2.0-LastEntry\r\n' >"$TMP/banner"
	v=$(isn native "$K" $S4 22 4242 --integrity-len 16 --payload-file "$TMP/banner")
	probe "$1-knock" $C4 $S4 22 "$v" --tsval 4242
	check "$1: a knock on the last entry reaches sshd (SYN-ACK)" answered "$1-knock" SA
	check "$1: a plain SYN to the last entry gets the RST" plain_gets RA
}

conf "$TMP/knockgw.conf" 256
check "the largest configuration passes knockgw -n" \
	sh -c "'$KNOCKGW' -n -c '$TMP/knockgw.conf' | grep -qx 'configuration OK'"

# A table inet knockgw owned by a live nft process (flags owner): only
# that process may change it, so the whole batch is refused.
mkfifo "$TMP/nft.in"
in_s nft -i <"$TMP/nft.in" >/dev/null 2>&1 &
PIDS="$PIDS $!"
exec 3>"$TMP/nft.in"
echo 'add table inet knockgw { flags owner; }' >&3
echo 'add chain inet knockgw mine { type filter hook input priority 0; }' >&3
wait_for 10 in_s nft list chain inet knockgw mine
in_s timeout 60 "$KNOCKGW" -f -c "$TMP/knockgw.conf" >"$TMP/owned.log" 2>&1 && rc=0 || rc=$?
check "an owned table: the daemon exits with an error" test "$rc" != 0 -a "$rc" != 124
check "... naming the refused message" \
	grep -q 'cannot install table inet knockgw: table (create): Operation not permitted' \
	"$TMP/owned.log"
check "... and installs nothing" \
	[ "$(in_s nft list table inet knockgw 2>/dev/null | grep -c 'chain ')" = 1 ]
exec 3>&-
wait_for 10 no_table

# 101 entries at start, then the largest by SIGHUP.
conf "$TMP/knockgw.conf" 101
if start_knockgw "$NS_S" "$TMP/knockgw.conf"; then
	ok "101 x 16: the daemon is ready"
	works "101 x 16" 101
	conf "$TMP/knockgw.conf" 256
	kill -HUP "$KGW_PID"
	check "256 x 16 by SIGHUP: reloaded" \
		wait_for 30 grep -q '^reloaded' "$TMP/knockgw-$NS_S.log"
	works "256 x 16 by SIGHUP" 256
	kill "$KGW_PID"
	wait_for 10 sh -c "! kill -0 $KGW_PID"
else
	not_ok "101 x 16: the daemon is ready"
fi
check "the daemon is not running" sh -c "! kill -0 $KGW_PID 2>/dev/null"

# The largest at start.
conf "$TMP/knockgw.conf" 256
if start_knockgw "$NS_S" "$TMP/knockgw.conf"; then
	ok "256 x 16 at start: the daemon is ready"
	works "256 x 16 at start" 256
else
	not_ok "256 x 16 at start: the daemon is ready"
fi
kill "$KGW_PID" 2>/dev/null || true
check "SIGTERM: the daemon exits" wait_for 10 sh -c "! kill -0 $KGW_PID 2>/dev/null"
check "... and its table stays, hiding (on_stop hide)" has_table
finish
